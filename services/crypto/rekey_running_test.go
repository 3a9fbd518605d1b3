package crypto

import (
	"testing"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// A rekey asked while another reconfigure of the VM is running in vCenter waits for it and
// is done once, also when the request comes again (a redelivery) meanwhile.
func TestRekeyWhileReconfigureRuns(t *testing.T) {
	js := startService(t)
	const ns = "my-namespace"
	putClass(t, js, ns, "rekey-target", inventory.OtherKeyProvider, "")
	v := deploytest.NewVM(ns, "rekey-busy", model.VirtualMachineSpec{ClassName: inventory.SeedClassName, StorageClass: "my-encrypted-storage-class"})
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	synced(t, js, v, 1, "True", "")

	simulator.TaskDelay = simulator.DelayConfig{MethodDelay: map[string]int{"ReconfigVm": 300, "LockHandoff": 0}}
	t.Cleanup(func() { simulator.TaskDelay = simulator.DelayConfig{} })
	busy, err := vm.Reconfigure(t.Context(), types.VirtualMachineConfigSpec{Annotation: "someone else's reconfigure"})
	if err != nil {
		t.Fatal(err)
	}
	gen := withClass(t, js, v, "rekey-target")
	v.Put(t, js, false) // the same request again
	if err := busy.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	st := synced(t, js, v, gen+1, "True", "")
	expectKey(t, vm, inventory.OtherKeyProvider, st.Crypto.KeyID)
	if n := cryptoReconfigures[*types.CryptoSpecShallowRecrypt](t, vm); n != 1 {
		t.Errorf("%d rekeys, want 1", n)
	}
}
