package power

import (
	"encoding/json"
	"slices"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// concern is what power does not read of a VM (reconcile.OnlyConcerned): the storage
// controllers, the schema upgrade's stamps, and of storage's slice all but its
// conditions (and its volumes, whose disk UUIDs a Disk boot entry names: bootoptions.go).
// The volumes and the inputs' generations gate a power-on (gate.go), so they count
// until the VM's power state is in sync with its spec.
func concern(o reconcile.Object) reconcile.Ignored {
	storageIgnored := []reconcile.Path{{"storage"}, {"hardware"}}
	if !bootsFromDisk(o) {
		storageIgnored = append(storageIgnored, reconcile.Path{"volumes"})
	}
	ign := reconcile.Ignored{
		Spec:   slices.Concat(reconcile.VMUpgradeStamps, reconcile.VMControllers),
		Inputs: map[string][]reconcile.Path{model.ServiceStorage: storageIgnored},
	}
	conds, err := reconcile.SliceConditions(o.Slices[model.ServicePower])
	if err == nil && reconcile.IsTrue(conds, model.ConditionPowerStateSynced) {
		ign.Spec = append(ign.Spec, reconcile.VMVolumes)
		ign.InputGenerations = true
	}
	return ign
}

// bootsFromDisk tells whether the VM's boot order names a disk; an unreadable spec does,
// to be safe.
func bootsFromDisk(o reconcile.Object) bool {
	var vm model.VirtualMachine
	if json.Unmarshal(o.Spec.Body, &vm) != nil {
		return true
	}
	if vm.Spec.BootOptions == nil {
		return false
	}
	return slices.ContainsFunc(vm.Spec.BootOptions.BootOrder, func(d model.BootableDevice) bool { return d.Type == model.BootDeviceDisk })
}
