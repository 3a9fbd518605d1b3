package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestVirtualMachinePowerStateEmptied: an empty spec.powerState is in the schema's domain
// (D4 defaults it on create), so emptying it on update is refused by PWR-2 as Invalid, by
// patch or by update, not as an unsupported value.
func TestVirtualMachinePowerStateEmptied(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	if code, body := g.do("POST", "/apis/storage.k8s.io/v1/storageclasses", adminToken, storageClass, "Content-Type", "application/yaml"); code != http.StatusCreated {
		t.Fatalf("create storage class: %d %s", code, body)
	}
	vm := `{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachine","metadata":{"name":"empty-power"},
		"spec":{"className":"my-vm-class","image":{"kind":"VirtualMachineImage","name":"vmi-0a0044d7c690bcbea"},
		"storageClass":"my-storage-class","powerState":""}}`
	code, body := g.do("POST", vms, userToken, vm)
	if code != http.StatusCreated || field(decode(t, body), "spec", "powerState") != "PoweredOn" {
		t.Fatalf("create with an empty powerState: %d %s, want 201 defaulted to PoweredOn", code, body)
	}
	stored := decode(t, body)
	stored["spec"].(map[string]any)["powerState"] = ""
	encoded, err := json.Marshal(stored)
	if err != nil {
		t.Fatal(err)
	}
	g.checkAdmission(t, []admissionCase{
		{"PWR-2 emptied by a merge patch", "PATCH", vms + "/empty-power", userToken, "application/merge-patch+json",
			`{"spec":{"powerState":""}}`, http.StatusUnprocessableEntity, "Invalid", `spec.powerState: Invalid value: ""`},
		{"PWR-2 emptied by an update", "PUT", vms + "/empty-power", userToken, "application/json",
			string(encoded), http.StatusUnprocessableEntity, "Invalid", `spec.powerState: Invalid value: ""`},
	})
	if _, body := g.do("PATCH", vms+"/empty-power", userToken, `{"spec":{"powerState":""}}`, "Content-Type", "application/merge-patch+json"); strings.Contains(string(body), "Unsupported value") {
		t.Errorf("an emptied powerState answered as an unsupported value: %s", body)
	}
}
