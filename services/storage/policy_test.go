package storage

import (
	"encoding/json"
	"testing"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// When placement finds no datastore for the VM's storage policy, the VM's storage condition
// says why (placement's words), not merely that it waits for the VM.
func TestStorageReadyRepeatsPlacementsPolicyProblem(t *testing.T) {
	js := startService(t)
	v := deploytest.NewVM("my-namespace", "policy-unknown", model.VirtualMachineSpec{StorageClass: "my-storage-class", Hardware: hardware()})
	v.Put(t, js, false)
	const why = "no datastore compatible with the storage policy: storage policy x of StorageClass my-storage-class is not known to vCenter"
	status, err := json.Marshal(map[string]any{"conditions": []map[string]any{{
		"type": model.ConditionPlacementReady, "status": "False", "reason": model.ReasonDatastoreNotFound, "message": why,
		"observedGeneration": 1, "lastTransitionTime": "2026-01-01T00:00:00Z",
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := events.PublishStatus(t.Context(), js, v.Ref, events.Slice{
		Service: model.ServicePlacement, UID: v.UID, Generation: 1, Status: status}); err != nil {
		t.Fatal(err)
	}
	v.WaitStatus(t, js, model.ServiceStorage, "DatastoreNotFound with placement's message", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		for _, c := range st.Conditions {
			if c.Type == model.ConditionStorageReady {
				return c.Status == "False" && c.Reason == model.ReasonDatastoreNotFound && c.Message == why
			}
		}
		return false
	})
}
