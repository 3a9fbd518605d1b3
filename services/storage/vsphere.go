package storage

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/vcenter"
)

// vmProperties are what the service reads of a VM: its devices and its files.
var vmProperties = []string{"config.hardware.device", "layoutEx"}

func readVM(ctx context.Context, vm *object.VirtualMachine) (mo.VirtualMachine, error) {
	var out mo.VirtualMachine
	if err := vm.Properties(ctx, vm.Reference(), vmProperties, &out); err != nil {
		return out, fmt.Errorf("read VM %s: %w", vm.Reference().Value, err)
	}
	if out.Config == nil {
		out.Config = &types.VirtualMachineConfigInfo{}
	}
	return out, nil
}

// addControllers adds the controllers in one reconfigure and waits for it; nothing is
// done when none of them can be added.
func addControllers(ctx context.Context, vm *object.VirtualMachine, want []wantController) error {
	changes := controllerAdds(want)
	if len(changes) == 0 {
		return nil
	}
	task, err := vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{DeviceChange: changes})
	if err != nil {
		return fmt.Errorf("reconfigure VM %s: %w", vm.Reference().Value, err)
	}
	if _, err := vcenter.WaitTask(ctx, task); err != nil {
		return fmt.Errorf("reconfigure VM %s: %w", vm.Reference().Value, err)
	}
	return nil
}
