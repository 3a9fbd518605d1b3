package model

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// The seed document explains the API with YAML examples. Every example must decode strictly
// (an unknown field is an error) into our types and re-encode without losing anything, so
// the seed's YAML applies to vmop unchanged. The test reads a copy in testdata so it is
// self-contained; TestSeedCopyIsCurrent keeps the copy honest.
const seedFile = "003_5c4b309985b5880e.txt"

// seedSkipped lists examples of kinds vmop does not serve, by their 1-based position among the
// seed's ```yaml fences.
var seedSkipped = map[int]string{}

// seedFragments names what the examples without apiVersion/kind are part of, by position. The
// status and spec fragments decode as the whole object (the rest of it left out), so the
// object's strict rules apply to them.
var seedFragments = map[int]string{
	3:  "VirtualMachine", // status.hardware (cpu, memory, vGPUs, controllers)
	4:  "annotations",    // the delete.check annotation pattern
	5:  "ObjectMeta",     // delete.check annotations
	7:  "VirtualMachine", // status.hardware cpu and memory
	8:  "VirtualMachine", // ClassConfigurationSynced condition
	13: "VirtualMachine", // status.crypto, encryption storage class
	14: "VirtualMachine", // status.crypto with a vTPM
	15: "VirtualMachine", // EncryptionSynced False
	16: "VirtualMachine", // EncryptionSynced True
	21: "VirtualMachine", // status.network.config
	22: "VirtualMachine", // status.storage
	23: "VirtualMachineImage",
	28: "VirtualMachine", // spec.volumes with placement
	29: "VirtualMachine", // spec.volumes with applicationType
	30: "VirtualMachine", // status.volumes, one image disk
	31: "VirtualMachine", // status.volumes, image disk and PVC
	32: "VirtualMachine", // status.volumes, Oracle RAC
	34: "annotations",    // the poweron.check annotation pattern
	35: "ObjectMeta",     // poweron.check annotations
	36: "VirtualMachine", // status.guest
	38: "VirtualMachine", // status.policies
	44: "VirtualMachineGroup",
}

// seedException is an example that does not decode strictly as written, and the one rewrite
// that makes it what vmop serves. Only the named example is rewritten; every other example is
// held to the strict decode. An exception that is no longer needed fails the test.
type seedException struct {
	reason string
	fix    func(doc map[string]any)
}

var seedExceptions = map[int]seedException{
	1: {
		reason: "the included vm-example.yaml is only available to us at an upstream commit that still says v1alpha4; its body is unchanged in v1alpha5",
		fix:    func(doc map[string]any) { doc["apiVersion"] = "vmoperator.vmware.com/v1alpha5" },
	},
	8: {
		reason: "condition status written as an unquoted YAML boolean; metav1.Condition.status is the string True/False/Unknown (Kubernetes rejects a boolean too)",
		fix:    quoteConditionStatuses,
	},
	15: {
		reason: "condition status written as an unquoted YAML boolean (see 8)",
		fix:    quoteConditionStatuses,
	},
	16: {
		reason: "condition status written as an unquoted YAML boolean (see 8)",
		fix:    quoteConditionStatuses,
	},
	21: {
		reason: "status.network.config.interfaces[].ip.addresses written as a scalar; it is a list of CIDRs in every upstream version",
		fix: func(doc map[string]any) {
			ip := dig(doc, "status", "network", "config", "interfaces", 0, "ip").(map[string]any)
			ip["addresses"] = []any{ip["addresses"]}
		},
	},
	22: {
		reason: "the seed writes status.storage.used; the JSON key is usage and used is a documentation alias only (api-rules §11 #1)",
		fix: func(doc map[string]any) {
			storage := dig(doc, "status", "storage").(map[string]any)
			storage["usage"] = storage["used"]
			delete(storage, "used")
		},
	},
	23: {
		reason: "the seed writes status.disks[].capacity; v1alpha5 has limit/requested and capacity is a documentation alias only (api-rules §11 #13)",
		fix: func(doc map[string]any) {
			disk := dig(doc, "status", "disks", 0).(map[string]any)
			disk["limit"] = disk["capacity"]
			delete(disk, "capacity")
		},
	},
}

func TestSeedExamplesDecodeStrictly(t *testing.T) {
	examples := seedExamples(t)
	if len(examples) != 44 {
		t.Fatalf("found %d yaml examples in the seed, want 44: update the tables in this file", len(examples))
	}
	for _, ex := range examples {
		t.Run(fmt.Sprintf("example%02d_line%d", ex.ordinal, ex.line), func(t *testing.T) {
			if reason, ok := seedSkipped[ex.ordinal]; ok {
				if _, err := seedTarget(ex.ordinal, yamlDoc(t, ex.yaml)); err == nil {
					t.Fatalf("skipped (%s) but its kind is served", reason)
				}
				t.Skip(reason)
			}
			exception, hasException := seedExceptions[ex.ordinal]
			err := decodeLossless(ex.ordinal, ex.yaml)
			if !hasException {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatalf("listed as an exception (%s) but decodes strictly as written", exception.reason)
			}
			doc := yamlDoc(t, ex.yaml)
			exception.fix(doc)
			fixed, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			if err := decodeLossless(ex.ordinal, fixed); err != nil {
				t.Fatalf("after the rewrite for %q: %v", exception.reason, err)
			}
		})
	}
}

// TestSeedTablesMatchExamples catches tables that name positions the seed does not have.
func TestSeedTablesMatchExamples(t *testing.T) {
	n := len(seedExamples(t))
	for name, table := range map[string][]int{
		"seedSkipped":    keys(seedSkipped),
		"seedFragments":  keys(seedFragments),
		"seedExceptions": keys(seedExceptions),
	} {
		for _, ord := range table {
			if ord < 1 || ord > n {
				t.Errorf("%s names example %d; the seed has %d", name, ord, n)
			}
		}
	}
}

func TestSeedCopyIsCurrent(t *testing.T) {
	shared, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "seeds", seedFile))
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("shared/seeds is not beside this checkout")
	}
	if err != nil {
		t.Fatal(err)
	}
	copied, err := os.ReadFile(filepath.Join("testdata", "seed", seedFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(shared, copied) {
		t.Errorf("testdata/seed/%s differs from shared/seeds/%s; copy it again and re-run", seedFile, seedFile)
	}
}

// seedExample is one ```yaml fence of the seed, dedented, with includes resolved.
type seedExample struct {
	ordinal int // 1-based position among the seed's yaml fences
	line    int // line of the opening fence
	yaml    []byte
}

var includeLine = regexp.MustCompile(`^--8<-- "([^"]+)"$`)

func seedExamples(t testing.TB) []seedExample {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "seed", seedFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	var (
		out    []seedExample
		cur    *seedExample
		indent string
		body   bytes.Buffer
	)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```yaml"):
			cur = &seedExample{ordinal: len(out) + 1, line: n}
			indent = line[:len(line)-len(strings.TrimLeft(line, " \t"))]
			body.Reset()
		case cur != nil && trimmed == "```":
			cur.yaml = bytes.Clone(body.Bytes())
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			line = strings.TrimPrefix(line, indent)
			if m := includeLine.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
				included, err := os.ReadFile(filepath.Join("testdata", "seed", filepath.Base(m[1])))
				if err != nil {
					t.Fatalf("seed line %d includes %s: %v", n, m[1], err)
				}
				body.Write(included)
				continue
			}
			body.WriteString(line + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("yaml fence opened at line %d is never closed", cur.line)
	}
	return out
}

// decodeLossless decodes data strictly into the type its apiVersion/kind (or the fragment
// table) names, encodes it again and requires every original value to come back. Values the
// encoder adds where the original had none must be empty (null, "", 0, false, {} or []): a
// metav1.Condition, for instance, always writes reason and message.
func decodeLossless(ordinal int, data []byte) error {
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("not YAML: %w", err)
	}
	m, _ := doc.(map[string]any)
	target, err := seedTarget(ordinal, m)
	if err != nil {
		return err
	}
	if err := yaml.UnmarshalStrict(data, target); err != nil {
		return fmt.Errorf("strict decode into %T: %w", target, err)
	}
	encoded, err := json.Marshal(target)
	if err != nil {
		return fmt.Errorf("encode %T: %w", target, err)
	}
	var got any
	if err := json.Unmarshal(encoded, &got); err != nil {
		return err
	}
	if diff := cmp.Diff(doc, dropAddedEmpties(doc, got)); diff != "" {
		return fmt.Errorf("%T lost data in a round trip (-seed +re-encoded):\n%s", target, diff)
	}
	return nil
}

// seedTarget returns a pointer to the Go value an example decodes into.
func seedTarget(ordinal int, doc map[string]any) (any, error) {
	if fragment, ok := seedFragments[ordinal]; ok {
		switch fragment {
		case "annotations":
			return &map[string]string{}, nil
		case "ObjectMeta":
			return &metav1.ObjectMeta{}, nil
		}
		return newObject(fragment)
	}
	apiVersion, _ := doc["apiVersion"].(string)
	kind, _ := doc["kind"].(string)
	for _, k := range Kinds() {
		if k.APIVersion() == apiVersion && k.Kind == kind {
			return newObject(kind)
		}
	}
	return nil, fmt.Errorf("%s %s is not a kind vmop serves", apiVersion, kind)
}

// dropAddedEmpties returns got without the empty values the encoder added where want has no key.
func dropAddedEmpties(want, got any) any {
	switch g := got.(type) {
	case map[string]any:
		w, _ := want.(map[string]any)
		for k, v := range g {
			if wv, ok := w[k]; ok {
				g[k] = dropAddedEmpties(wv, v)
			} else if isEmptyJSON(v) {
				delete(g, k)
			}
		}
	case []any:
		if w, ok := want.([]any); ok && len(w) == len(g) {
			for i := range g {
				g[i] = dropAddedEmpties(w[i], g[i])
			}
		}
	}
	return got
}

func isEmptyJSON(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case float64:
		return x == 0
	case bool:
		return !x
	case []any:
		return len(x) == 0
	case map[string]any:
		for _, e := range x {
			if !isEmptyJSON(e) {
				return false
			}
		}
		return true
	}
	return false
}

func yamlDoc(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// quoteConditionStatuses turns boolean condition statuses into the strings Kubernetes uses.
func quoteConditionStatuses(doc map[string]any) {
	for _, c := range dig(doc, "status", "conditions").([]any) {
		c := c.(map[string]any)
		if b, ok := c["status"].(bool); ok {
			c["status"] = map[bool]string{true: "True", false: "False"}[b]
		}
	}
}

// dig walks a decoded JSON document by map keys and list indexes.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch p := p.(type) {
		case string:
			v = v.(map[string]any)[p]
		case int:
			v = v.([]any)[p]
		}
	}
	return v
}

func keys[V any](m map[int]V) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
