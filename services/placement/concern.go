package placement

import (
	"slices"

	"github.com/vmop/vmop/pkg/reconcile"
)

// concern is what placement does not read of a VM (reconcile.Config.Concern): the schema
// upgrade's stamps and, once the VM exists, what storage owns (volumes and controllers);
// before, the create may read them.
func concern(o reconcile.Object) reconcile.Ignored {
	if _, created := reconcile.Placed(o); !created {
		return reconcile.Ignored{Spec: reconcile.VMUpgradeStamps}
	}
	return reconcile.Ignored{Spec: slices.Concat(reconcile.VMUpgradeStamps, reconcile.VMControllers, []reconcile.Path{reconcile.VMVolumes})}
}
