package placement

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/model"
)

// A storage class whose policy vCenter does not know leaves the VM uncreated, and
// PlacementReady names the policy with reason DatastoreNotFound (storage repeats it).
func TestUnknownStoragePolicyCreatesNothing(t *testing.T) {
	h := newHarness(t)
	h.seedObject("VirtualMachineClass", testNamespace, inventory.SeedClassName, "")
	h.seedObject("VirtualMachineImage", testNamespace, inventory.SeedImageName, "")
	const unknown = "00000000-0000-4000-8000-00000000dead"
	h.putObject(map[string]any{
		"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
		"metadata":    map[string]any{"name": "unknown-policy"},
		"provisioner": "csi.vsphere.vmware.com",
		"parameters":  map[string]any{model.StoragePolicyIDParameter: unknown},
	})
	h.runService()

	v := newTestVM("unknown-policy")
	obj := v.object(1, false)
	obj["spec"].(map[string]any)["storageClass"] = "unknown-policy"
	h.append(v.ref, obj)
	_, st := h.waitSlice(v.ref, "placement refused", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		return condition(st, model.ConditionPlacementReady).Reason == model.ReasonDatastoreNotFound
	})
	c := condition(st, model.ConditionPlacementReady)
	if c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, unknown) || !strings.Contains(c.Message, "not known to vCenter") {
		t.Errorf("PlacementReady = %+v, want False naming policy %s as unknown", c, unknown)
	}
	if created := condition(st, model.ConditionCreated); created.Status == metav1.ConditionTrue || created.Reason == model.ReasonCreating {
		t.Errorf("Created = %+v, want no create", created)
	}
	if n := len(h.vmsOf(v.uid)); n != 0 {
		t.Errorf("%d VMs in vCenter, want 0", n)
	}
}

// Without its StorageClass a VM waits: no create, PlacementReady says what it waits for.
func TestMissingStorageClassWaits(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	h.runService()

	v := newTestVM("no-storage-class")
	obj := v.object(1, false)
	obj["spec"].(map[string]any)["storageClass"] = "no-such-class"
	h.append(v.ref, obj)
	_, st := h.waitSlice(v.ref, "waiting", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		return condition(st, model.ConditionPlacementReady).Reason == model.ReasonNotReady
	})
	if c := condition(st, model.ConditionPlacementReady); !strings.Contains(c.Message, "StorageClass") {
		t.Errorf("PlacementReady = %+v, want it to name the StorageClass it waits for", c)
	}
	if n := len(h.vmsOf(v.uid)); n != 0 {
		t.Errorf("%d VMs in vCenter, want 0", n)
	}
}
