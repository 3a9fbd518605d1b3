package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const groups = "/apis/vmoperator.vmware.com/v1alpha5/namespaces/my-namespace/virtualmachinegroups"

// myGroup is the seed's VirtualMachineGroup example, trimmed, plus a forced power sync so
// group defaulting rewrites a field ("now") and stamps an annotation.
const myGroup = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachineGroup
metadata:
  name: my-group
spec:
  powerState: PoweredOn
  nextForcePowerStateSyncTime: now
  bootOrder:
  - members:
    - name: database-vm
      kind: VirtualMachine
    powerOnDelay: 10s
  - members:
    - name: web-server-1
`

// Re-submitting an object exactly as the gateway returned it, defaulted values included,
// is accepted and changes nothing (api-rules §5.1): PUT of the GET body, also after a
// service wrote status and an administrator labelled the object, and a merge patch of the
// original manifest (what an apply without server-side changes amounts to).
func TestResubmissionIsAcceptedUnchanged(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	admissionInventory(t, g)
	// reapply is the manifest again, less one-shot requests ("now") that kubectl apply
	// would not send again because they did not change since the last apply.
	tests := []struct {
		kind, collection, name, manifest, reapply, token string
		status                                           string // a service's status slice, JSON
	}{
		{"VirtualMachine", vms, "my-vm", minimalVM, minimalVM, userToken, `{"status":{"powerState":"PoweredOn"}}`},
		{"VirtualMachineClass", classes, "my-vm-class", seedClass, seedClass, adminToken, ""},
		{"VirtualMachineGroup", groups, "my-group", myGroup, strings.Replace(myGroup, "  nextForcePowerStateSyncTime: now\n", "", 1),
			userToken, `{"status":{"lastUpdatedPowerStateTime":"2025-06-01T12:00:00Z"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			self := tt.collection + "/" + tt.name
			if tt.kind != "VirtualMachineClass" { // admissionInventory made the class
				if code, body := g.do("POST", tt.collection, tt.token, tt.manifest, "Content-Type", "application/yaml"); code != http.StatusCreated {
					t.Fatalf("create: %d %s", code, body)
				}
			}
			putBack := func(what string) {
				t.Helper()
				code, got := g.do("GET", self, tt.token, nil)
				if code != http.StatusOK {
					t.Fatalf("GET: %d %s", code, got)
				}
				before := specCount(t, js)
				code, put := g.do("PUT", self, tt.token, got)
				if code != http.StatusOK {
					t.Fatalf("%s: PUT of the GET body: %d %s", what, code, put)
				}
				assertUnchanged(t, what, decode(t, got), decode(t, put))
				if after := specCount(t, js); after != before {
					t.Errorf("%s: SPECS grew from %d to %d messages", what, before, after)
				}
			}
			putBack("as created")

			if tt.status != "" {
				if code, body := g.do("PUT", self+"/status", serviceToken, tt.status); code != http.StatusOK {
					t.Fatalf("service writes status: %d %s", code, body)
				}
			}
			if code, body := g.do("PATCH", self, adminToken, `{"metadata":{"labels":{"team":"blue"}}}`,
				"Content-Type", "application/merge-patch+json"); code != http.StatusOK {
				t.Fatalf("admin labels the object: %d %s", code, body)
			}
			putBack("after status and label writes")

			code, cur := g.do("GET", self, tt.token, nil)
			if code != http.StatusOK {
				t.Fatalf("GET: %d %s", code, cur)
			}
			before := specCount(t, js)
			code, patched := g.do("PATCH", self, tt.token, yamlToJSON(t, tt.reapply), "Content-Type", "application/merge-patch+json")
			if code != http.StatusOK {
				t.Fatalf("merge patch of the original manifest: %d %s", code, patched)
			}
			assertUnchanged(t, "merge patch of the original manifest", decode(t, cur), decode(t, patched))
			if after := specCount(t, js); after != before {
				t.Errorf("merge patch of the original manifest: SPECS grew from %d to %d messages", before, after)
			}
		})
	}
}

// assertUnchanged requires the write's answer to be the object as it was: same generation,
// resourceVersion and spec.
func assertUnchanged(t *testing.T, what string, before, after map[string]any) {
	t.Helper()
	for _, f := range []string{"generation", "resourceVersion", "uid"} {
		if b, a := field(before, "metadata", f), field(after, "metadata", f); b != a {
			t.Errorf("%s: metadata.%s changed from %v to %v", what, f, b, a)
		}
	}
	b, _ := json.Marshal(before["spec"])
	a, _ := json.Marshal(after["spec"])
	if string(a) != string(b) {
		t.Errorf("%s: spec changed\nbefore: %s\nafter:  %s", what, b, a)
	}
}

func yamlToJSON(t *testing.T, manifest string) []byte {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(strings.TrimSpace(manifest)))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
