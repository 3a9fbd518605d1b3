package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

const (
	kindGroups            = "/apis/vmoperator.vmware.com/v1alpha5/namespaces/my-namespace/virtualmachinegroups"
	kindEncryptionClasses = "/apis/encryption.vmware.com/v1alpha1/namespaces/my-namespace/encryptionclasses"
	lastUpdatedAnnotation = "vmoperator.vmware.com.protected/last-updated-power-state-time"
)

const webGroup = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachineGroup
metadata:
  name: web
spec:
  powerState: PoweredOn
  bootOrder:
  - members:
    - name: web-vm
`

// admissionCase is one request and the Status it must be answered with.
type admissionCase struct {
	name, method, path, token, contentType, body string
	wantCode                                     int
	wantReason, wantMessage                      string
}

func (g *gateway) checkAdmission(t *testing.T, tests []admissionCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := specCount(t, g.js)
			code, body := g.do(tt.method, tt.path, tt.token, tt.body, "Content-Type", tt.contentType)
			st := decode(t, body)
			msg, _ := st["message"].(string)
			if code != tt.wantCode || st["reason"] != tt.wantReason || !strings.Contains(msg, tt.wantMessage) {
				t.Errorf("got %d %s, want %d %s with %q", code, body, tt.wantCode, tt.wantReason, tt.wantMessage)
			}
			if after := specCount(t, g.js); after != before {
				t.Errorf("SPECS grew from %d to %d messages on a rejected request", before, after)
			}
		})
	}
}

func TestVirtualMachineGroupAdmission(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	code, body := g.do("POST", kindGroups, userToken, webGroup, "Content-Type", "application/yaml")
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	stamp, _ := field(decode(t, body), "metadata", "annotations", lastUpdatedAnnotation).(string)
	if _, err := time.Parse(time.RFC3339Nano, stamp); err != nil {
		t.Errorf("created group's %s = %q, want a time stamped by defaulting: %v", lastUpdatedAnnotation, stamp, err)
	}
	const yaml, merge = "application/yaml", "application/merge-patch+json"
	g.checkAdmission(t, []admissionCase{
		{"9.3-1 nextForcePowerStateSyncTime other than now", "POST", kindGroups, userToken, yaml,
			strings.Replace(webGroup, "name: web\n", "name: other\n", 1) + "  nextForcePowerStateSyncTime: tomorrow\n",
			http.StatusForbidden, "Forbidden", `spec.nextForcePowerStateSyncTime: Invalid value: "tomorrow"`},
		{"VMG-6 group is its own parent", "POST", kindGroups, userToken, yaml,
			strings.Replace(webGroup, "spec:\n", "spec:\n  groupName: web\n", 1),
			http.StatusUnprocessableEntity, "Invalid", `spec.groupName: Invalid value: "web"`},
		{"VMG-1 user changes the last-updated annotation", "PATCH", kindGroups + "/web", userToken, merge,
			`{"metadata":{"annotations":{"` + lastUpdatedAnnotation + `":"2030-01-01T00:00:00Z"}}}`,
			http.StatusUnprocessableEntity, "Invalid", "metadata.annotations[" + lastUpdatedAnnotation + "]: Forbidden"},
		{"VMG-3 power state cleared", "PATCH", kindGroups + "/web", userToken, merge, `{"spec":{"powerState":null}}`,
			http.StatusUnprocessableEntity, "Invalid", "spec.powerState: Forbidden"},
		{"VMG-3 power state emptied", "PATCH", kindGroups + "/web", userToken, merge, `{"spec":{"powerState":""}}`,
			http.StatusUnprocessableEntity, "Invalid", "spec.powerState: Forbidden"},
	})

	// A power state change restamps the annotation.
	code, body = g.do("PATCH", kindGroups+"/web", userToken, `{"spec":{"powerState":"PoweredOff"}}`, "Content-Type", merge)
	if got, _ := field(decode(t, body), "metadata", "annotations", lastUpdatedAnnotation).(string); code != http.StatusOK || got == stamp {
		t.Errorf("power off: %d, annotation %q, want 200 and a new stamp (was %q)", code, got, stamp)
	}
}

func TestVirtualMachineClassAdmission(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	limited := strings.Replace(seedClass, "spec:\n", "spec:\n  controllerName: vmop\n  policies:\n    resources:\n"+
		"      requests: {cpu: 500m, memory: 1Gi}\n      limits: {cpu: 1, memory: 2Gi}\n", 1)
	code, body := g.do("POST", classes, adminToken, limited, "Content-Type", "application/yaml")
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	g.checkAdmission(t, []admissionCase{
		{"9.1.2 cpu request above limit", "POST", classes, adminToken, "application/yaml",
			strings.NewReplacer("my-vm-class", "greedy", "cpu: 500m", "cpu: 1500m").Replace(limited),
			http.StatusUnprocessableEntity, "Invalid", `spec.policies.resources.requests.cpu: Invalid value: "1500m"`},
	})

	// Updates are not validated (§9.1.2), and an emptied controllerName is kept (§9.1.1).
	code, body = g.do("PATCH", classes+"/my-vm-class", adminToken,
		`{"spec":{"controllerName":"","policies":{"resources":{"requests":{"memory":"4Gi"}}}}}`,
		"Content-Type", "application/merge-patch+json")
	got := decode(t, body)
	if code != http.StatusOK || field(got, "spec", "controllerName") != "vmop" ||
		field(got, "spec", "policies", "resources", "requests", "memory") != "4Gi" {
		t.Errorf("update: %d %s, want 200 with controllerName vmop and memory request 4Gi", code, body)
	}
}

func TestEncryptionClassAdmission(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	const class = "apiVersion: encryption.vmware.com/v1alpha1\nkind: EncryptionClass\nmetadata:\n  name: enc\n"
	g.checkAdmission(t, []admissionCase{
		{"9.4 keyProvider missing", "POST", kindEncryptionClasses, adminToken, "application/yaml", class,
			http.StatusUnprocessableEntity, "Invalid", "spec.keyProvider: Required value"},
	})
	if code, body := g.do("POST", kindEncryptionClasses, adminToken, class+"spec:\n  keyProvider: local\n",
		"Content-Type", "application/yaml"); code != http.StatusCreated {
		t.Errorf("create with a key provider: %d %s", code, body)
	}
}
