package storage

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// syncAdvanced applies the boot disk (added to an ISO VM, grown to
// spec.advanced.bootDiskCapacity) and spec.advanced.changeBlockTracking, which changes
// only while the VM is off, in one reconfigure, and sets
// VirtualMachineHardwareDeviceConfigVerified. It returns the VM as read after a change.
func (h *handler) syncAdvanced(ctx context.Context, vm *model.VirtualMachine, vcVM *object.VirtualMachine, mvm mo.VirtualMachine, conds *reconcile.ConditionSet) (_ mo.VirtualMachine, bootDiskMissing bool, _ error) {
	devices := object.VirtualDeviceList(mvm.Config.Hardware.Device)
	var problems []string
	changes, problem, err := h.addBootDisk(ctx, vm, mvm)
	if err != nil {
		return mvm, false, err
	}
	bootProblem := problem
	bootDiskMissing = len(changes) > 0 || bootProblem != ""
	problems = appendProblem(problems, problem)
	if len(changes) == 0 {
		grow, problem := growBootDisk(vm, devices)
		if grow != nil {
			changes = append(changes, grow)
		}
		problems = appendProblem(problems, problem)
	}
	cs := types.VirtualMachineConfigSpec{DeviceChange: changes}
	if a := vm.Spec.Advanced; a != nil && a.ChangeBlockTracking != nil {
		have := mvm.Config.ChangeTrackingEnabled
		switch {
		case have != nil && *have == *a.ChangeBlockTracking:
		case mvm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOff:
			cs.ChangeTrackingEnabled = a.ChangeBlockTracking
		default:
			problems = append(problems, fmt.Sprintf("changed block tracking becomes %t once the VM is powered off", *a.ChangeBlockTracking))
		}
	}
	if len(cs.DeviceChange) > 0 || cs.ChangeTrackingEnabled != nil {
		task, err := vcVM.Reconfigure(ctx, cs)
		if err == nil {
			_, err = vcenter.WaitTask(ctx, task)
		}
		switch {
		case vcenter.IsFault(err):
			problems = append(problems, fmt.Sprintf("reconfiguring the boot disk or changed block tracking failed: %v", err))
		case err != nil:
			return mvm, bootDiskMissing, fmt.Errorf("reconfigure VM %s: %w", vcVM.Reference().Value, err)
		default: // the boot disk, if it was among the changes, is there now
			bootDiskMissing = bootProblem != ""
			if mvm, _, err = readVM(ctx, h.vc, vcVM.Reference().Value, ""); err != nil {
				return mvm, false, err
			}
		}
	}
	if len(problems) > 0 {
		conds.Set(model.ConditionHardwareDeviceConfigVerified, metav1.ConditionFalse, model.ReasonHardwareDeviceConfigMismatch, joinMessages(problems...))
	} else {
		conds.Set(model.ConditionHardwareDeviceConfigVerified, metav1.ConditionTrue, "", "")
	}
	return mvm, bootDiskMissing, nil
}

func appendProblem(problems []string, p string) []string {
	if p == "" {
		return problems
	}
	return append(problems, p)
}

// provisioned sets the backing's allocation from spec.advanced.defaultVolumeProvisioningMode
// for a disk vmop creates: thin unless it asks for thick or eager-zeroed thick.
func provisioned(b *types.VirtualDiskFlatVer2BackingInfo, a *model.VirtualMachineAdvancedSpec) *types.VirtualDiskFlatVer2BackingInfo {
	mode := model.VolumeProvisioningModeThin
	if a != nil && a.DefaultVolumeProvisioningMode != "" {
		mode = a.DefaultVolumeProvisioningMode
	}
	b.ThinProvisioned = types.NewBool(mode == model.VolumeProvisioningModeThin)
	b.EagerlyScrub = types.NewBool(mode == model.VolumeProvisioningModeThickEagerZero)
	return b
}
