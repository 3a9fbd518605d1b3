package vcenter

import (
	"context"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// ReadVMConfig is [ReadVM] for services that read the VM's devices and settings: the
// properties come back by value, with an empty Config where vCenter sent none (a VM
// whose configuration is not readable yet), so that they need no nil checks.
func ReadVMConfig(ctx context.Context, c *govmomi.Client, moref, instanceUUID string, props []string) (mo.VirtualMachine, *object.VirtualMachine, error) {
	var out mo.VirtualMachine
	vm, err := ReadVM(ctx, c, moref, instanceUUID, props, &out)
	if err != nil {
		return out, nil, err
	}
	if out.Config == nil {
		out.Config = &types.VirtualMachineConfigInfo{}
	}
	return out, vm, nil
}
