package power

import (
	"context"
	"fmt"
	"time"

	"github.com/vmware/govmomi/event"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// bootEvents are the events saying a VM's guest started afresh: a reset, a guest reboot,
// a power-on. vcsim resets by powering off and on, so there a reset shows as a power-on;
// it logs no guest reboot, so there a Soft restart that a crash left marked is made again.
var bootEvents = []string{"VmResettingEvent", "VmGuestRebootEvent", "VmStartingEvent", "VmPoweredOnEvent"}

// checkRestart settles a restart that a crash or a lost answer left marked
// (modes.restartingSince): vCenter's events tell whether the VM booted since. If it did,
// the restart ran and its mark is cleared. If not, modes reports no restart carried out,
// so that plan makes it now: it is neither lost nor made twice. A VM that is off owes no
// restart (it boots afresh whenever it is powered on): its mark is cleared without a
// look at the events, and the restart stands as recorded. A suspended VM is left as it is (it takes no reconfigure, and a
// restart waits for it to run anyway).
func (r *reconciler) checkRestart(ctx context.Context, vm *object.VirtualMachine, modes vmState) (vmState, error) {
	since := modes.restartingSince
	switch {
	case since.IsZero() || modes.power == model.PowerStateSuspended:
		return modes, nil
	case modes.power == model.PowerStateOff:
		return r.restartSettled(ctx, vm, modes), nil
	}
	booted, err := event.NewManager(vm.Client()).QueryEvents(ctx, types.EventFilterSpec{
		Entity:      &types.EventFilterSpecByEntity{Entity: vm.Reference(), Recursion: types.EventFilterSpecRecursionOptionSelf},
		EventTypeId: bootEvents,
		Time:        &types.EventFilterSpecByTime{BeginTime: &since},
		MaxCount:    1,
	})
	if err != nil {
		return modes, fmt.Errorf("read the boot events of VM %s: %w", vm.Reference().Value, err)
	}
	if len(booted) == 0 {
		modes.lastRestart = time.Time{}
		return modes, nil
	}
	return r.restartSettled(ctx, vm, modes), nil
}

// restartSettled clears the mark of a restart that needs no more doing.
func (r *reconciler) restartSettled(ctx context.Context, vm *object.VirtualMachine, modes vmState) vmState {
	modes.restartingSince = time.Time{}
	r.clearRecords(ctx, vm, []types.BaseOptionValue{&types.OptionValue{Key: vcenter.KeyRestarting, Value: ""}}, "a settled restart")
	return modes
}
