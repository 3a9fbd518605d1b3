package power

import (
	"encoding/json"
	"slices"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// concern is what power does not read of a VM (reconcile.Config.Concern): the storage
// controllers, the schema upgrade's stamps, the zone label, of storage's slice all but its conditions
// (and its volumes, whose disk UUIDs a Disk boot entry names: bootoptions.go), and of
// placement's, network's and crypto's slices all but what gate.go reads (network's
// interfaces too when a Network boot entry names one), and of the inputs' conditions all
// but the prerequisites of a power-on; until the VM is created, only placement's slice.
// The volumes and the inputs' generations gate a power-on (gate.go), so they count
// until the VM's power state is in sync with its spec.
func concern(o reconcile.Object) reconcile.Ignored {
	storageIgnored := []reconcile.Path{{"storage"}, {"hardware"}}
	if !bootsFrom(o, model.BootDeviceDisk) {
		storageIgnored = append(storageIgnored, reconcile.Path{"volumes"})
	}
	// Of network's slice, its interfaces only name a Network boot entry's adapter.
	networkRead := []reconcile.Path{{"conditions"}}
	if bootsFrom(o, model.BootDeviceNetwork) {
		networkRead = append(networkRead, reconcile.Path{"network"})
	}
	ign := reconcile.Ignored{
		Spec:   slices.Concat(reconcile.VMUpgradeStamps, reconcile.VMControllers, []reconcile.Path{reconcile.VMZoneLabel}),
		Inputs: map[string][]reconcile.Path{model.ServiceStorage: storageIgnored},
		// What gate.go reads (inputStatus) of the other inputs, and bootoptions.go of network's.
		OnlyOfInputs: map[string][]reconcile.Path{
			model.ServicePlacement: {{"uniqueID"}, {"conditions"}},
			model.ServiceNetwork:   networkRead,
			model.ServiceCrypto:    {{"conditions"}},
		},
		OnlyConditionsOf: prerequisiteConditions(),
	}
	// Until the VM is created, that is all a power-on waits for (unmetPrerequisites).
	ign.UnreadUntilCreated(o, model.ServiceStorage, model.ServiceNetwork, model.ServiceCrypto)
	conds, err := reconcile.SliceConditions(o.Slices[model.ServicePower])
	if err == nil && reconcile.IsTrue(conds, model.ConditionPowerStateSynced) {
		ign.Spec = append(ign.Spec, reconcile.VMVolumes)
		ign.InputGenerations = true
	}
	return ign
}

// prerequisiteConditions are the only conditions of its inputs that power reads: the
// prerequisites of a power-on (gate.go), volumesAttached among them.
func prerequisiteConditions() map[string][]string {
	out := map[string][]string{}
	for _, p := range append(slices.Clone(prerequisites), volumesAttached) {
		out[p.service] = append(out[p.service], p.condition)
	}
	return out
}

// bootsFrom tells whether the VM's boot order names a device of the type; an unreadable
// spec does, to be safe.
func bootsFrom(o reconcile.Object, device string) bool {
	var vm model.VirtualMachine
	if json.Unmarshal(o.Spec.Body, &vm) != nil {
		return true
	}
	if vm.Spec.BootOptions == nil {
		return false
	}
	return slices.ContainsFunc(vm.Spec.BootOptions.BootOrder, func(d model.BootableDevice) bool { return string(d.Type) == device })
}
