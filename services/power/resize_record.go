package power

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
)

// vmRecord is what a resize reads of a VM besides what observe does.
type vmRecord struct {
	applied  model.AppliedClass // the class whose configuration the VM has
	recorded bool               // applied comes from the VM's own record
	host     *types.ManagedObjectReference
}

// recordOf is the class obs's VM records having. A VM without a record (made before
// vmop recorded it) has the class the pending-resize annotation names (D14), else the
// spec's, which it was created with; of that class, no version is known.
func recordOf(obs observation, obj *model.VirtualMachine) vmRecord {
	rec := vmRecord{host: obs.host}
	rec.applied, rec.recorded = model.ParseAppliedClass(obs.appliedClass)
	if !rec.recorded {
		var ok bool
		if rec.applied, ok = model.ParseAppliedClass(obj.Annotations[model.AnnotationLastResizedClass]); !ok {
			rec.applied = model.AppliedClass{Name: obj.Spec.ClassName}
		}
		rec.applied.UID, rec.applied.Generation = "", 0
	}
	return rec
}

// coreMHz is the clock of one core of host, for a class that asks for CPU in cores.
func coreMHz(ctx context.Context, vm *object.VirtualMachine, host *types.ManagedObjectReference) (int64, error) {
	if host == nil {
		return 0, fmt.Errorf("VM %s has no host to size its CPU policy by", vm.Reference().Value)
	}
	var h mo.HostSystem
	if err := property.DefaultCollector(vm.Client()).RetrieveOne(ctx, *host, []string{"summary.hardware.cpuMhz"}, &h); err != nil {
		return 0, fmt.Errorf("read the CPU clock of host %s: %w", host.Value, err)
	}
	if h.Summary.Hardware == nil {
		return 0, fmt.Errorf("host %s reports no CPU clock", host.Value)
	}
	return int64(h.Summary.Hardware.CpuMhz), nil
}
