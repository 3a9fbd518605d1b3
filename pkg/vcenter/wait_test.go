package vcenter_test

import (
	"testing"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/vcenter"
)

// WaitTask returns a finished task's info, and a failed task's fault as object.Task.Wait
// does.
func TestWaitTask(t *testing.T) {
	sim := simulate(t)
	ctx := t.Context()

	task, err := sim.vm.PowerOff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	info, err := vcenter.WaitTask(ctx, task)
	if err != nil || info.State != types.TaskInfoStateSuccess || info.DescriptionId != "VirtualMachine.powerOff" {
		t.Fatalf("WaitTask(power off) = %+v, %v; want a successful power-off", info, err)
	}
	if task, err = sim.vm.PowerOff(ctx); err != nil { // off already
		t.Fatal(err)
	}
	info, err = vcenter.WaitTask(ctx, task)
	if !fault.Is(err, &types.InvalidPowerState{}) || info == nil || info.State != types.TaskInfoStateError {
		t.Errorf("WaitTask(second power off) = %+v, %v; want the task's InvalidPowerState", info, err)
	}
}
