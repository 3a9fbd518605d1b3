package crypto

import (
	"encoding/json"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// A powered-on VM asked to encrypt is not touched and says it must be powered off (the
// seed's example condition); once power reports it off it is encrypted, and it powers on.
func TestPoweredOnVMAskedToEncrypt(t *testing.T) {
	js := startService(t)
	v := deploytest.NewVM("my-namespace", "enc-on", model.VirtualMachineSpec{ClassName: inventory.SeedClassName, StorageClass: "my-storage-class"})
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	powerTo(t, js, v, vm, types.VirtualMachinePowerStatePoweredOn)

	v.Spec.StorageClass = "my-encrypted-storage-class"
	v.Put(t, js, false)
	st := synced(t, js, v, 2, "False", model.ReasonInvalidState)
	if msg := message(st, model.ConditionEncryptionSynced); msg != "Must be powered off to encrypt VM." {
		t.Errorf("message %q, want the seed's %q", msg, "Must be powered off to encrypt VM.")
	}
	if home, _, _ := keys(t, vm); home != nil {
		t.Fatalf("a powered-on VM was encrypted: %+v", home)
	}

	powerTo(t, js, v, vm, types.VirtualMachinePowerStatePoweredOff)
	st = synced(t, js, v, 2, "True", "")
	expectKey(t, vm, inventory.KeyProvider, st.Crypto.KeyID)
	powerTo(t, js, v, vm, types.VirtualMachinePowerStatePoweredOn)
}

// powerTo powers vm on or off in vcsim and publishes power's slice saying so, as the
// power service does.
func powerTo(t *testing.T, js jetstream.JetStream, v *deploytest.VM, vm *object.VirtualMachine, state types.VirtualMachinePowerState) {
	t.Helper()
	var task *object.Task
	var err error
	if state == types.VirtualMachinePowerStatePoweredOn {
		task, err = vm.PowerOn(t.Context())
	} else {
		task, err = vm.PowerOff(t.Context())
	}
	if err == nil {
		err = task.Wait(t.Context())
	}
	if err != nil {
		t.Fatalf("power %s: %v", state, err)
	}
	power := model.PowerStateOff
	if state == types.VirtualMachinePowerStatePoweredOn {
		power = model.PowerStateOn
	}
	status, _ := json.Marshal(model.VirtualMachineStatus{PowerState: power})
	if _, err := events.PublishStatus(t.Context(), js, v.Ref, events.Slice{Service: model.ServicePower, UID: v.UID, Generation: generation(t, js, v), Status: status}); err != nil {
		t.Fatal(err)
	}
}

func message(st model.VirtualMachineStatus, typ string) string {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c.Message
		}
	}
	return ""
}
