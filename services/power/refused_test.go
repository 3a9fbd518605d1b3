package power_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
	"github.com/vmop/vmop/services/power"
)

// A restart vCenter refuses did not happen: while refused, the condition says so and the
// VM keeps no record of it; once vCenter accepts, the next look at the VM restarts it,
// once.
func TestRefusedRestartIsMadeOnTheNextTry(t *testing.T) {
	h := startWith(t, power.Config{SoftRetry: 200 * time.Millisecond})
	calls := h.watchCalls()
	v := h.powered("refused-restart")
	calls.refuseAll(v, callReset, &types.InvalidState{})
	at := h.askRestart(v, model.PowerOpModeHard)
	refused := h.waitStatus(v, "restart refused", notSynced(model.ReasonNotSynced, "reset failed"))
	if refused.Status.LastRestartTime != nil {
		t.Errorf("lastRestartTime %v for a restart vCenter refused", refused.Status.LastRestartTime)
	}
	h.waitUntil(vcenter.KeyLastRestart+" taken back", func() bool { return h.extraConfig(v, vcenter.KeyLastRestart) == "" },
		func() string { return h.extraConfig(v, vcenter.KeyLastRestart) })
	calls.allowAll(v, callReset)
	refusedResets := calls.count(v, callReset)
	// The next look at the VM (a resync's, or this reconcile's) restarts it.
	h.stopIdle(v)
	if err := power.ReconcileOnce(h.ctx, h.cfg, v.ref); err != nil {
		t.Fatal(err)
	}
	h.run()
	h.waitRestarted(v, at)
	if n := calls.count(v, callReset) - refusedResets; n != 1 {
		t.Errorf("%d resets once vCenter accepted them, want one", n)
	}
}

// Another task holding the VM does not start the restart: it is tried again, and made once.
func TestRestartBehindAnotherTaskIsTriedAgain(t *testing.T) {
	h := startWith(t, power.Config{SoftRetry: 200 * time.Millisecond})
	calls := h.watchCalls()
	v := h.powered("restart-behind-task")
	calls.failNext(v, callReset, &types.TaskInProgress{})
	at := h.askRestart(v, model.PowerOpModeHard)
	h.waitRestarted(v, at)
	if n := calls.count(v, callReset); n != 2 {
		t.Errorf("%d resets, want the one another task held back and the one that restarted it", n)
	}
	if got, want := h.extraConfig(v, vcenter.KeyLastRestart), fmt.Sprint(at.UnixNano()); got != want {
		t.Errorf("%s = %q, want %q", vcenter.KeyLastRestart, got, want)
	}
}

// The task that held a restart back may hold back the reconfigure that takes its record
// back too: that is tried again, and the restart is made once.
func TestRestartRecordTakenBackBehindAnotherTask(t *testing.T) {
	h := startWith(t, power.Config{SoftRetry: 200 * time.Millisecond})
	calls := h.watchCalls()
	v := h.powered("record-behind-task")
	calls.failNext(v, callReset, &types.TaskInProgress{})
	calls.failNext(v, callReconfigure, nil, &types.TaskInProgress{}) // the record passes, its undo meets the task
	at := h.askRestart(v, model.PowerOpModeHard)
	h.waitRestarted(v, at)
	if n := calls.count(v, callReset); n != 2 {
		t.Errorf("%d resets, want the one another task held back and the one that restarted it", n)
	}
}

// A TrySoft power-off whose guest shutdown meets another task asks the guest again: it is
// not a guest that cannot shut down, so the VM is not powered off hard.
func TestTrySoftBehindAnotherTaskAsksTheGuestAgain(t *testing.T) {
	h := startWith(t, power.Config{SoftRetry: 200 * time.Millisecond})
	calls := h.watchCalls()
	v := h.powered("trysoft-behind-task")
	h.fakeTools(v)
	calls.failNext(v, callShutdown, &types.TaskInProgress{})
	h.change(v, func(vm *model.VirtualMachine) {
		vm.Spec.PowerState, vm.Spec.PowerOffMode = model.PowerStateOff, model.PowerOpModeTrySoft
	})
	h.waitStatus(v, "off", synced(model.PowerStateOff))
	if n := calls.count(v, callPowerOff); n != 0 {
		t.Errorf("powered off hard %d times, want the guest asked again instead", n)
	}
	if n := calls.count(v, callShutdown); n != 2 {
		t.Errorf("guest asked to shut down %d times, want twice (once held back)", n)
	}
}
