package api_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// seedClass is the seed document's CPU-and-memory VirtualMachineClass example.
const seedClass = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachineClass
metadata:
  name: my-vm-class
spec:
  configSpec:
    _typeName: VirtualMachineConfigSpec
    cpuAllocation:
      _typeName: ResourceAllocationInfo
      limit: 400
      reservation: 200
    memoryAllocation:
      _typeName: ResourceAllocationInfo
      limit: 2048
      reservation: 1024
  hardware:
    cpus: 2
    memory: 4Gi
`

const classes = "/apis/vmoperator.vmware.com/v1alpha5/namespaces/my-namespace/virtualmachineclasses"

func createClass(t *testing.T, g *gateway) map[string]any {
	t.Helper()
	code, body := g.do("POST", classes, adminToken, seedClass, "Content-Type", "application/yaml")
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	return decode(t, body)
}

func TestCreateGetListPatchDelete(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	created := createClass(t, g)
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp"} {
		if field(created, "metadata", f) == nil {
			t.Errorf("created object lacks metadata.%s: %v", f, created["metadata"])
		}
	}
	if got := field(created, "metadata", "generation"); got != float64(1) {
		t.Errorf("generation = %v, want 1", got)
	}
	if got := field(created, "spec", "configSpec", "cpuAllocation", "reservation"); got != float64(200) {
		t.Errorf("configSpec not kept verbatim: reservation = %v", got)
	}

	// A read right after the write reflects it.
	code, body := g.do("GET", classes+"/my-vm-class", adminToken, nil)
	if code != http.StatusOK {
		t.Fatalf("get: %d %s", code, body)
	}
	if diff := cmp.Diff(created, decode(t, body)); diff != "" {
		t.Errorf("get differs from create response (-create +get):\n%s", diff)
	}

	code, body = g.do("GET", classes+"?labelSelector=missing%3Dlabel", adminToken, nil)
	if code != http.StatusOK || len(decode(t, body)["items"].([]any)) != 0 {
		t.Errorf("label-selected list: %d %s", code, body)
	}

	code, body = g.do("PATCH", classes+"/my-vm-class", adminToken, `{"spec":{"description":"merged"}}`,
		"Content-Type", "application/merge-patch+json")
	if code != http.StatusOK || field(decode(t, body), "spec", "description") != "merged" {
		t.Fatalf("merge patch: %d %s", code, body)
	}
	if got := field(decode(t, body), "metadata", "generation"); got != float64(2) {
		t.Errorf("generation after a spec change = %v, want 2", got)
	}
	code, body = g.do("PATCH", classes+"/my-vm-class", adminToken,
		`[{"op":"replace","path":"/spec/hardware/cpus","value":4}]`, "Content-Type", "application/json-patch+json")
	if code != http.StatusOK || field(decode(t, body), "spec", "hardware", "cpus") != float64(4) {
		t.Fatalf("json patch: %d %s", code, body)
	}

	// A label change is no spec change.
	code, body = g.do("PATCH", classes+"/my-vm-class", adminToken, `{"metadata":{"labels":{"tier":"gold"}}}`,
		"Content-Type", "application/merge-patch+json")
	if code != http.StatusOK || field(decode(t, body), "metadata", "generation") != float64(3) {
		t.Errorf("label patch: %d generation %v, want 3", code, field(decode(t, body), "metadata", "generation"))
	}
	code, body = g.do("GET", classes+"?labelSelector=tier%3Dgold", adminToken, nil)
	if items := decode(t, body)["items"].([]any); code != http.StatusOK || len(items) != 1 {
		t.Errorf("label-selected list after labelling: %d %s", code, body)
	}

	if code, body = g.do("DELETE", classes+"/my-vm-class", adminToken, nil); code != http.StatusOK {
		t.Fatalf("delete: %d %s", code, body)
	}
	g.eventually("class gone", func() bool {
		code, _ := g.do("GET", classes+"/my-vm-class", adminToken, nil)
		return code == http.StatusNotFound
	})
}

func TestConcurrentUpdatesWithSameResourceVersion(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	obj := createClass(t, g)
	rv := field(obj, "metadata", "resourceVersion").(string)

	codes := make([]int, 2)
	var wg sync.WaitGroup
	for i, desc := range []string{"first", "second"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := strings.Replace(seedClass, "spec:\n", "  resourceVersion: \""+rv+"\"\nspec:\n  description: "+desc+"\n", 1)
			codes[i], _ = g.do("PUT", classes+"/my-vm-class", adminToken, body, "Content-Type", "application/yaml")
		}()
	}
	wg.Wait()
	won, conflicted := 0, 0
	for _, c := range codes {
		switch c {
		case http.StatusOK:
			won++
		case http.StatusConflict:
			conflicted++
		}
	}
	if won != 1 || conflicted != 1 {
		t.Fatalf("codes = %v, want exactly one 200 and one 409", codes)
	}
	// The loser may retry with the new version.
	_, body := g.do("GET", classes+"/my-vm-class", adminToken, nil)
	if got := field(decode(t, body), "metadata", "generation"); got != float64(2) {
		t.Errorf("generation = %v, want 2 (one update stored)", got)
	}
	stale := strings.Replace(seedClass, "spec:\n", "  resourceVersion: \""+rv+"\"\nspec:\n", 1)
	if code, body := g.do("PUT", classes+"/my-vm-class", adminToken, stale, "Content-Type", "application/yaml"); code != http.StatusConflict {
		t.Errorf("update with a stale resourceVersion: %d %s, want 409", code, body)
	}
}

func TestDottedNamesAreStored(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	body := strings.Replace(seedClass, "name: my-vm-class", "name: best-effort.small.v2", 1)
	if code, resp := g.do("POST", classes, adminToken, body, "Content-Type", "application/yaml"); code != http.StatusCreated {
		t.Fatalf("create dotted name: %d %s", code, resp)
	}
	code, resp := g.do("GET", classes+"/best-effort.small.v2", adminToken, nil)
	if code != http.StatusOK || field(decode(t, resp), "metadata", "name") != "best-effort.small.v2" {
		t.Errorf("get dotted name: %d %s", code, resp)
	}
}

// Creates of one name at once: one is 201 and every other is 409 AlreadyExists (the reason
// create-if-absent clients look for), whether it saw the object or lost the race to store
// it; a few server-side applies of one new object at once all succeed, the ones that lost
// the create as updates (kube-apiserver, too, gives up on a patch after 5 conflicts).
func TestCreatesAtOnceOfOneName(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	const writers = 16
	for round := range 3 {
		name := fmt.Sprintf("raced-%d", round)
		class := strings.Replace(seedClass, "name: my-vm-class", "name: "+name, 1)
		var wg sync.WaitGroup
		codes := make([]int, writers)
		bodies := make([][]byte, writers)
		for i := range writers {
			wg.Go(func() {
				codes[i], bodies[i] = g.do("POST", classes, adminToken, class, "Content-Type", "application/yaml")
			})
		}
		wg.Wait()
		created := 0
		for i, code := range codes {
			switch {
			case code == http.StatusCreated:
				created++
			case code != http.StatusConflict || !strings.Contains(string(bodies[i]), `"reason":"AlreadyExists"`):
				t.Errorf("create %s: %d %s, want 201 or 409 AlreadyExists", name, code, bodies[i])
			}
		}
		if created != 1 {
			t.Errorf("%d creates of %s succeeded, want 1", created, name)
		}

		applied := fmt.Sprintf("applied-%d", round)
		config := strings.Replace(seedClass, "name: my-vm-class", "name: "+applied, 1)
		const appliers = 4
		for i := range appliers {
			wg.Go(func() {
				codes[i], bodies[i] = g.do("PATCH", classes+"/"+applied+"?fieldManager=m"+strconv.Itoa(i)+"&force=true", adminToken, config,
					"Content-Type", "application/apply-patch+yaml")
			})
		}
		wg.Wait()
		for i, code := range codes[:appliers] {
			if code != http.StatusOK && code != http.StatusCreated {
				t.Errorf("apply %s: %d %s, want it applied", applied, code, bodies[i])
			}
		}
	}
}
