package network

import (
	"slices"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// concern is what network does not read of a VM (reconcile.Config.Concern): what storage
// owns (volumes, controllers; the CD-ROMs are read), the schema upgrade's stamps, the
// zone label, the generations of placement's and power's slices (only what they say
// counts), all of power's slice but its powerState, and both slices until the VM is
// created.
func concern(o reconcile.Object) reconcile.Ignored {
	ign := reconcile.Ignored{
		Spec: slices.Concat(reconcile.VMUpgradeStamps, reconcile.VMControllers, []reconcile.Path{reconcile.VMVolumes, reconcile.VMZoneLabel}),
		// Power's slice only wakes network when a VM comes on; what it is, vCenter says.
		OnlyOfInputs:     map[string][]reconcile.Path{model.ServicePower: {{"powerState"}}},
		InputGenerations: true,
	}
	ign.UnreadUntilCreated(o, model.ServicePlacement, model.ServicePower)
	return ign
}
