package storage

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// promote makes the VM's linked-clone disks independent (PromoteDisks_Task with unlink)
// before they are registered (seed, Linked Clone Promotion), as spec.promoteDisksMode
// allows: Online (the default) in any power state, Offline only while the VM is off;
// Disabled leaves them linked and unregistered. It returns the disks to register, or
// what the registration waits for. Promoting a disk that has no parent any more does
// nothing, so a repeated promotion after a crash is harmless.
func (r *registrar) promote(ctx context.Context, vm *model.VirtualMachine, vcVM *object.VirtualMachine, disks []imageDisk, conds *reconcile.ConditionSet) ([]imageDisk, string, error) {
	var ready, linked []imageDisk
	for _, d := range disks {
		if d.linked {
			linked = append(linked, d)
		} else {
			ready = append(ready, d)
		}
	}
	if len(linked) == 0 {
		promotionSynced(vm, disks, conds)
		return disks, "", nil
	}
	switch vm.Spec.PromoteDisksMode {
	case model.PromoteDisksModeDisabled:
		return ready, "", nil
	case model.PromoteDisksModeOffline:
		state, err := vcVM.PowerState(ctx)
		if err != nil {
			return nil, "", fmt.Errorf("read power state of %s: %w", vcVM.Reference().Value, err)
		}
		if state != types.VirtualMachinePowerStatePoweredOff {
			msg := "linked-clone disks are promoted once the VM is powered off (promoteDisksMode Offline)"
			conds.Set(model.ConditionDiskPromotionSynced, metav1.ConditionFalse, model.ReasonDiskPromotionPending, msg)
			return nil, msg, nil
		}
	}
	req := types.PromoteDisks_Task{This: vcVM.Reference(), Unlink: true}
	for _, d := range linked {
		req.Disks = append(req.Disks, *d.device)
	}
	conds.Set(model.ConditionDiskPromotionStarted, metav1.ConditionTrue, "", "")
	res, err := methods.PromoteDisks_Task(ctx, vcVM.Client(), &req)
	if err == nil {
		_, err = vcenter.WaitTask(ctx, object.NewTask(vcVM.Client(), res.Returnval))
	}
	if vcenter.IsFault(err) {
		msg := fmt.Sprintf("promoting the linked-clone disks failed: %v", err)
		conds.Set(model.ConditionDiskPromotionSynced, metav1.ConditionFalse, model.ReasonDiskPromotionTaskError, msg)
		return nil, msg, nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("promote the disks of %s: %w", vcVM.Reference().Value, err)
	}
	conds.Set(model.ConditionDiskPromotionSynced, metav1.ConditionTrue, "", "")
	for i := range linked {
		linked[i].linked = false
	}
	return append(ready, linked...), "", nil
}

// promotionSynced reports DiskPromotionSynced True when promotion is on and no disk is
// a linked clone any more.
func promotionSynced(vm *model.VirtualMachine, disks []imageDisk, conds *reconcile.ConditionSet) {
	if vm.Spec.PromoteDisksMode == model.PromoteDisksModeDisabled {
		return
	}
	for _, d := range disks {
		if d.linked {
			return
		}
	}
	conds.Set(model.ConditionDiskPromotionSynced, metav1.ConditionTrue, "", "")
}
