package network

import (
	"slices"

	"github.com/vmop/vmop/pkg/reconcile"
)

// concern is what network does not read of a VM (reconcile.OnlyConcerned): what storage
// owns (volumes, controllers; the CD-ROMs are read), the schema upgrade's stamps, and the
// generations of placement's and power's slices (only what they say counts).
func concern(reconcile.Object) reconcile.Ignored {
	return reconcile.Ignored{
		Spec:             slices.Concat(reconcile.VMUpgradeStamps, reconcile.VMControllers, []reconcile.Path{reconcile.VMVolumes}),
		InputGenerations: true,
	}
}
