package api_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
)

const applyType = "application/apply-patch+yaml"

// classConfig is an apply configuration of the seed's class with cpus set.
func classConfig(cpus string, extra string) string {
	return `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachineClass
metadata:
  name: applied-class
spec:
  hardware:
    cpus: ` + cpus + `
    memory: 4Gi
` + extra
}

// managers lists an object's managedFields as manager/operation.
func managers(t *testing.T, obj map[string]any) []string {
	t.Helper()
	var out []string
	entries, _ := field(obj, "metadata", "managedFields").([]any)
	for _, e := range entries {
		m := e.(map[string]any)
		out = append(out, m["manager"].(string)+"/"+m["operation"].(string))
	}
	return out
}

// TestServerSideApply: an apply creates the object and records its manager; a second
// manager changing the same field gets kube-apiserver's 409 naming field and manager and
// stores nothing; force takes the field; an ordinary patch records its manager beside the
// appliers, and the managers survive it.
func TestServerSideApply(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	path := classes + "/applied-class"

	before := specCount(t, g.js)
	code, body := g.do("PATCH", path+"?fieldManager=gitops&dryRun=All", adminToken, classConfig("2", ""), "Content-Type", applyType)
	if code != http.StatusCreated || specCount(t, g.js) != before {
		t.Fatalf("dry-run apply creating: %d %s, stored %d records", code, body, specCount(t, g.js)-before)
	}
	if code, _ := g.do("GET", path, adminToken, nil); code != http.StatusNotFound {
		t.Fatalf("after a dry-run apply: %d, want 404", code)
	}
	code, body = g.do("PATCH", path+"?fieldManager=gitops", adminToken, classConfig("2", ""), "Content-Type", applyType)
	if code != http.StatusCreated {
		t.Fatalf("apply creating: %d %s", code, body)
	}
	created := decode(t, body)
	if got := managers(t, created); strings.Join(got, ",") != "gitops/Apply" {
		t.Errorf("managers after the creating apply: %v", got)
	}

	// The same configuration again changes nothing.
	code, body = g.do("PATCH", path+"?fieldManager=gitops", adminToken, classConfig("2", ""), "Content-Type", applyType)
	if code != http.StatusOK || field(decode(t, body), "metadata", "resourceVersion") != field(created, "metadata", "resourceVersion") {
		t.Errorf("re-apply: %d %s, want 200 and no new version", code, body)
	}

	before = specCount(t, g.js)
	code, body = g.do("PATCH", path+"?fieldManager=other", adminToken, classConfig("4", ""), "Content-Type", applyType)
	var st struct {
		Reason  string
		Message string
		Details struct {
			Causes []struct{ Reason, Field, Message string }
		}
	}
	if err := json.Unmarshal(body, &st); err != nil || code != http.StatusConflict || st.Reason != "Conflict" ||
		st.Message != `Apply failed with 1 conflict: conflict with "gitops": .spec.hardware.cpus` ||
		len(st.Details.Causes) != 1 || st.Details.Causes[0].Field != ".spec.hardware.cpus" ||
		st.Details.Causes[0].Reason != "FieldManagerConflict" {
		t.Errorf("conflicting apply: %d %s", code, body)
	}
	if after := specCount(t, g.js); after != before {
		t.Errorf("a conflicting apply stored %d records", after-before)
	}

	code, body = g.do("PATCH", path+"?fieldManager=other&force=true", adminToken, classConfig("4", ""), "Content-Type", applyType)
	if code != http.StatusOK || field(decode(t, body), "spec", "hardware", "cpus") != float64(4) {
		t.Fatalf("forced apply: %d %s", code, body)
	}
	if got := managers(t, decode(t, body)); strings.Join(got, ",") != "gitops/Apply,other/Apply" {
		t.Errorf("managers after the forced apply: %v", got)
	}

	// A merge patch by a client naming no manager is recorded under its User-Agent.
	code, body = g.do("PATCH", path, adminToken, `{"spec":{"description":"patched"}}`,
		"Content-Type", "application/merge-patch+json", "User-Agent", "tool/1.2 (linux)")
	if code != http.StatusOK {
		t.Fatalf("merge patch: %d %s", code, body)
	}
	if got := managers(t, decode(t, body)); strings.Join(got, ",") != "gitops/Apply,other/Apply,tool/Update" {
		t.Errorf("managers after the merge patch: %v", got)
	}
	// A PUT of the object without its managedFields (a client that knows nothing of them)
	// keeps them and adds its own.
	put := decode(t, body)
	delete(put["metadata"].(map[string]any), "managedFields")
	put["spec"].(map[string]any)["description"] = "replaced"
	code, body = g.do("PUT", path, adminToken, put, "User-Agent", "replacer/0.1")
	if code != http.StatusOK {
		t.Fatalf("put: %d %s", code, body)
	}
	if got := managers(t, decode(t, body)); strings.Join(got, ",") != "gitops/Apply,other/Apply,replacer/Update" {
		t.Errorf("managers after the PUT: %v", got)
	}
	// The gitops manager, applying again without cpus, gives the field up: it stays
	// other's with its value.
	code, body = g.do("PATCH", path+"?fieldManager=gitops", adminToken, strings.Replace(classConfig("2", ""), "    cpus: 2\n", "", 1),
		"Content-Type", applyType)
	if code != http.StatusOK || field(decode(t, body), "spec", "hardware", "cpus") != float64(4) ||
		field(decode(t, body), "spec", "description") != "replaced" {
		t.Errorf("apply without cpus: %d %s", code, body)
	}
}

// TestServerSideApplyBadInput: unknown fields are 422 naming them, an apply without a
// field manager and force on another patch type are 422, a version or kind other than
// the URL's 400; none stores anything.
func TestServerSideApplyBadInput(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	path := classes + "/applied-class"
	before := specCount(t, g.js)
	tests := []struct {
		name, query, contentType, body string
		code                           int
		want                           string
	}{
		{"unknown field", "?fieldManager=m", applyType, classConfig("2", "  bogus: 1\n"), http.StatusUnprocessableEntity, `"field":"spec.bogus"`},
		{"no manager", "", applyType, classConfig("2", ""), http.StatusUnprocessableEntity, "fieldManager: Required value: is required for apply patch"},
		{"force on merge patch", "?force=true", "application/merge-patch+json", `{}`, http.StatusUnprocessableEntity, "force: Forbidden"},
		{"wrong kind", "?fieldManager=m", applyType, strings.Replace(classConfig("2", ""), "kind: VirtualMachineClass", "kind: VirtualMachineImage", 1), http.StatusBadRequest, "does not match the expected kind"},
		{"not YAML", "?fieldManager=m", applyType, "spec: [", http.StatusBadRequest, "error decoding YAML"},
		{"status", "?fieldManager=m", applyType, classConfig("2", ""), http.StatusUnsupportedMediaType, "accepted media types"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := path
			if tt.name == "status" {
				createClass(t, g) // my-vm-class exists for the status path
				p = classes + "/my-vm-class/status"
				before = specCount(t, g.js)
			}
			code, body := g.do("PATCH", p+tt.query, adminToken, tt.body, "Content-Type", tt.contentType)
			if code != tt.code || !strings.Contains(string(body), tt.want) {
				t.Errorf("%d %s, want %d with %q", code, body, tt.code, tt.want)
			}
			if after := specCount(t, g.js); after != before {
				t.Errorf("stored %d records", after-before)
			}
		})
	}
	// An ordinary user may not create by applying where it may not create.
	code, body := g.do("PATCH", "/apis/vmoperator.vmware.com/v1alpha5/namespaces/other/virtualmachines/x?fieldManager=m", userToken,
		"apiVersion: vmoperator.vmware.com/v1alpha5\nkind: VirtualMachine\nmetadata: {name: x}\n", "Content-Type", applyType)
	if code != http.StatusForbidden {
		t.Errorf("apply in a foreign namespace: %d %s, want 403", code, body)
	}
}

// TestServerSideApplyConcurrent: managers applying their own labels at the same time all
// succeed (a lost compare-and-swap is merged again, as kube-apiserver retries) and no
// label is lost.
func TestServerSideApplyConcurrent(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	path := classes + "/applied-class"
	if code, body := g.do("PATCH", path+"?fieldManager=base", adminToken, classConfig("2", ""), "Content-Type", applyType); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	const n = 4
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			doc := "apiVersion: vmoperator.vmware.com/v1alpha5\nkind: VirtualMachineClass\nmetadata:\n  name: applied-class\n  labels:\n    team-" + strconv.Itoa(i) + ": x\n"
			codes[i], _ = g.do("PATCH", path+"?fieldManager=team-"+strconv.Itoa(i), adminToken, doc, "Content-Type", applyType)
		})
	}
	wg.Wait()
	_, body := g.do("GET", path, adminToken, nil)
	labels, _ := field(decode(t, body), "metadata", "labels").(map[string]any)
	for i := range n {
		if codes[i] != http.StatusOK || labels["team-"+strconv.Itoa(i)] != "x" {
			t.Errorf("manager team-%d: %d, labels %v", i, codes[i], labels)
		}
	}
}
