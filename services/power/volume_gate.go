package power

import (
	"fmt"
	"slices"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// volumesAttached is a prerequisite only of a VM that names claims in spec.volumes: they
// are attached before it boots.
var volumesAttached = prerequisite{service: model.ServiceStorage, condition: model.ConditionHardwareVolumesVerified, currentSpec: true}

// withVolumes adds the wait for the VM's volumes to waits when it has claims and is
// created (before, nothing else is waited for).
func withVolumes(o reconcile.Object, in map[string]inputStatus, vm *model.VirtualMachine, waits []string) []string {
	hasClaims := slices.ContainsFunc(vm.Spec.Volumes, func(v model.VirtualMachineVolume) bool {
		return v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName != ""
	})
	created := !slices.ContainsFunc(waits, waitsForCreated)
	if !hasClaims || !created {
		return waits
	}
	if why := volumesAttached.unmet(o, in, false); why != "" {
		return append(waits, fmt.Sprintf("%s (%s)", volumesAttached.condition, why))
	}
	return waits
}
