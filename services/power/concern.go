package power

import (
	"slices"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// concern is what power does not read of a VM (reconcile.OnlyConcerned): the storage
// controllers, the schema upgrade's stamps, and of storage's slice all but its
// conditions. The volumes and the inputs' generations gate a power-on (gate.go), so
// they count until the VM's power state is in sync with its spec.
func concern(o reconcile.Object) reconcile.Ignored {
	ign := reconcile.Ignored{
		Spec:   slices.Concat(reconcile.VMUpgradeStamps, reconcile.VMControllers),
		Inputs: map[string][]reconcile.Path{model.ServiceStorage: {{"volumes"}, {"storage"}, {"hardware"}}},
	}
	conds, err := reconcile.SliceConditions(o.Slices[model.ServicePower])
	if err == nil && reconcile.IsTrue(conds, model.ConditionPowerStateSynced) {
		ign.Spec = append(ign.Spec, reconcile.VMVolumes)
		ign.InputGenerations = true
	}
	return ign
}
