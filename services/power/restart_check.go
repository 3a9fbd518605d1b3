package power

import (
	"context"
	"fmt"
	"time"

	"github.com/vmware/govmomi/event"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/vcenter"
)

// bootEvents are the events saying a VM's guest started afresh: a reset, a guest reboot,
// a power-on. vcsim resets by powering off and on, so there a reset shows as a power-on;
// it logs no guest reboot, so there a Soft restart that a crash left marked is made again.
var bootEvents = []string{"VmResettingEvent", "VmGuestRebootEvent", "VmStartingEvent", "VmPoweredOnEvent"}

// recordSkew is how far before a restart's time vCenter's clock may have stamped its
// record: the record is made at or after that time by power's clock.
const recordSkew = time.Hour

// checkRestart settles a restart that a crash or a lost answer left marked
// (modes.restarting): vCenter's events tell whether the VM booted after the record was
// made. If it did, the restart ran and its mark is cleared. If not, modes reports no
// restart carried out, so that plan makes it now: it is neither lost nor made twice.
func checkRestart(ctx context.Context, vm *object.VirtualMachine, modes vmState) (vmState, error) {
	if modes.restarting.IsZero() {
		return modes, nil
	}
	ran, err := restartRan(ctx, vm, modes.restarting)
	if err != nil {
		return modes, err
	}
	if !ran {
		modes.lastRestart = time.Time{}
		return modes, nil
	}
	if err := reconfigure(ctx, vm, []types.BaseOptionValue{&types.OptionValue{Key: vcenter.KeyRestarting, Value: ""}}); err != nil {
		return modes, fmt.Errorf("clear the mark of a restart of VM %s that ran: %w", vm.Reference().Value, err)
	}
	modes.restarting = time.Time{}
	return modes, nil
}

// restartRan reports whether vm booted after the reconfigure that recorded the restart
// at. Without that record among the events (vCenter keeps them for a while, not for
// ever) it reports false: a restart is made at least once.
func restartRan(ctx context.Context, vm *object.VirtualMachine, at time.Time) (bool, error) {
	begin := at.Add(-recordSkew)
	found, err := event.NewManager(vm.Client()).QueryEvents(ctx, types.EventFilterSpec{
		Entity:      &types.EventFilterSpecByEntity{Entity: vm.Reference(), Recursion: types.EventFilterSpecRecursionOptionSelf},
		EventTypeId: append([]string{"VmReconfiguredEvent"}, bootEvents...),
		Time:        &types.EventFilterSpecByTime{BeginTime: &begin},
		MaxCount:    1000,
	})
	if err != nil {
		return false, fmt.Errorf("read the events of VM %s: %w", vm.Reference().Value, err)
	}
	mark := lastRestartValue(at)
	record := int32(-1)
	for _, e := range found {
		if r, ok := e.(*types.VmReconfiguredEvent); ok && r.Key > record && marks(r.ConfigSpec, mark) {
			record = r.Key
		}
	}
	if record < 0 {
		return false, nil
	}
	for _, e := range found {
		if _, reconfigured := e.(*types.VmReconfiguredEvent); !reconfigured && e.GetEvent().Key > record {
			return true, nil
		}
	}
	return false, nil
}

// marks reports whether spec sets vcenter.KeyRestarting to mark.
func marks(spec types.VirtualMachineConfigSpec, mark string) bool {
	for _, o := range spec.ExtraConfig {
		if opt := o.GetOptionValue(); opt.Key == vcenter.KeyRestarting && opt.Value == mark {
			return true
		}
	}
	return false
}
