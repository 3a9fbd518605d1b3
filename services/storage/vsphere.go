package storage

import (
	"context"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/vcenter"
)

// vmProperties are what the service reads of a VM: its devices, its files (the boot disk
// goes beside them), whether it is on (disks are hot-added and removed differently,
// changed block tracking changes only while off) and whether it tracks changed blocks.
var vmProperties = []string{"config.hardware.device", "config.files.vmPathName", "config.changeTrackingEnabled", "layoutEx", "runtime.powerState"}

// readVM reads the VM placement created (vcenter.ReadVM) once its tasks are done.
func readVM(ctx context.Context, c *govmomi.Client, moref, instanceUUID string) (mo.VirtualMachine, *object.VirtualMachine, error) {
	var out mo.VirtualMachine
	vm, err := vcenter.ReadVM(ctx, c, moref, instanceUUID, vmProperties, &out)
	if err != nil {
		return out, nil, err
	}
	if out.Config == nil {
		out.Config = &types.VirtualMachineConfigInfo{}
	}
	return out, vm, nil
}

// addControllers adds the controllers in one reconfigure and waits for it; nothing is
// done when none of them can be added.
func addControllers(ctx context.Context, vm *object.VirtualMachine, want []wantController) error {
	changes := controllerAdds(want)
	if len(changes) == 0 {
		return nil
	}
	return reconfigure(ctx, vm, changes)
}
