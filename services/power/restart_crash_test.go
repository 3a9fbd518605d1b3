package power_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
	"github.com/vmop/vmop/services/power"
)

// crashAt stops the service the first time crashes(m) holds for a call on v's VM, while
// the call waits in vCenter; the call is then answered with a fault nobody reads and
// does nothing, as if the service died just before making it. The returned channel is
// closed once the service stopped. Every other call goes to calls.
func (h *harness) crashAt(calls *vcCalls, v *testVM, crashes func(m *simulator.Method) bool) <-chan struct{} {
	stopped := make(chan struct{})
	var once sync.Once
	h.sim.Intercept(func(ctx *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault) {
		crash := false
		if m.This == v.vm.Reference() && crashes(m) {
			once.Do(func() { crash = true })
		}
		if !crash {
			return calls.intercept(ctx, m)
		}
		go func() {
			h.stop()
			close(stopped)
		}()
		<-stopped
		return nil, &types.InvalidState{}
	})
	return stopped
}

// A crash between the restart's record and its reset neither loses the restart nor
// makes it twice: the next run finds the mark, sees in vCenter's events that the VM did
// not boot since, and resets it once.
func TestRestartRecordedBeforeACrashIsMade(t *testing.T) {
	h, calls, v, at := crashBeforeReset(t, "crash-before-reset")
	if got, want := h.extraConfig(v, vcenter.KeyLastRestart), fmt.Sprint(at.UnixNano()); got != want {
		t.Fatalf("after the crash %s = %q, want %q", vcenter.KeyLastRestart, got, want)
	}
	h.run() // the reconcile the crash cut short left its lease to expire
	h.waitUntilWithin(deadline+events.LeaseTTL, "the reset made", func() bool { return calls.count(v, callReset) > 0 && h.extraConfig(v, vcenter.KeyRestarting) == "" },
		func() string {
			return fmt.Sprintf("%d resets, mark %q", calls.count(v, callReset), h.extraConfig(v, vcenter.KeyRestarting))
		})
	h.waitRestarted(v, at)
	h.stopIdle(v)
	if n := calls.count(v, callReset); n != 1 {
		t.Errorf("%d resets, want one", n)
	}
}

// A crash after the reset, before its mark is cleared, makes no second reset: vCenter's
// events show the VM booted since the record, so the next run only clears the mark.
func TestRestartMadeBeforeACrashIsNotRepeated(t *testing.T) {
	h := startWith(t, power.Config{SoftRetry: 200 * time.Millisecond})
	calls := h.watchCalls()
	v := h.powered("crash-after-reset")
	stopped := h.crashAt(calls, v, func(m *simulator.Method) bool {
		req, ok := m.Body.(*types.ReconfigVM_Task)
		if !ok {
			return false
		}
		for _, o := range req.Spec.ExtraConfig {
			if opt := o.GetOptionValue(); opt.Key == vcenter.KeyRestarting && opt.Value == "" {
				return true // the clear after the reset
			}
		}
		return false
	})
	at := h.askRestart(v, model.PowerOpModeHard)
	<-stopped
	if n := calls.count(v, callReset); n != 1 {
		t.Fatalf("%d resets before the crash, want one", n)
	}
	h.run() // the reconcile the crash cut short left its lease to expire
	h.waitUntilWithin(deadline+events.LeaseTTL, "the mark cleared", func() bool { return h.extraConfig(v, vcenter.KeyRestarting) == "" },
		func() string { return h.extraConfig(v, vcenter.KeyRestarting) })
	h.waitRestarted(v, at)
	h.stopIdle(v)
	if n := calls.count(v, callReset); n != 1 {
		t.Errorf("%d resets, want one", n)
	}
}

// A restart mark on a VM that is off when the service comes back owes nothing: the VM
// boots afresh whenever it is powered on. The mark is cleared, the recorded restart
// stands in the status, and no reset or power-on is made.
func TestRestartMarkOnAnOffVMIsCleared(t *testing.T) {
	h, calls, v, at := crashBeforeReset(t, "crash-then-off")
	// While the service is down, its user powers the VM off in vCenter and asks for it off.
	task, err := v.vm.PowerOff(h.ctx)
	if err == nil {
		err = task.Wait(h.ctx)
	}
	if err != nil {
		t.Fatalf("power off in vCenter: %v", err)
	}
	h.change(v, func(vm *model.VirtualMachine) { vm.Spec.PowerState = model.PowerStateOff })
	// The first power-on is counted already.
	before := calls.count(v, callReset) + calls.count(v, callPowerOn)
	h.run() // the reconcile the crash cut short left its lease to expire
	h.waitUntilWithin(deadline+events.LeaseTTL, "the mark cleared", func() bool { return h.extraConfig(v, vcenter.KeyRestarting) == "" },
		func() string { return h.extraConfig(v, vcenter.KeyRestarting) })
	h.waitStatus(v, "off, restarted at the request's time", func(s sliceStatus) bool {
		return synced(model.PowerStateOff)(s) && s.Status.LastRestartTime != nil && s.Status.LastRestartTime.Unix() == at.Unix()
	})
	h.stopIdle(v)
	if n := calls.count(v, callReset) + calls.count(v, callPowerOn) - before; n != 0 {
		t.Errorf("%d resets and power-ons since the crash, want none", n)
	}
}

// crashBeforeReset powers a VM on, asks for a Hard restart and stops the service at its
// reset, after the restart's record and mark; it returns when the service stopped, with
// the time of the request.
func crashBeforeReset(t *testing.T, name string) (h *harness, calls *vcCalls, v *testVM, at time.Time) {
	t.Helper()
	h = startWith(t, power.Config{SoftRetry: 200 * time.Millisecond})
	calls = h.watchCalls()
	v = h.powered(name)
	stopped := h.crashAt(calls, v, func(m *simulator.Method) bool { return m.Name == callReset })
	at = h.askRestart(v, model.PowerOpModeHard)
	<-stopped
	if got := h.extraConfig(v, vcenter.KeyRestarting); got == "" {
		t.Fatalf("after the crash %s is not set", vcenter.KeyRestarting)
	}
	return h, calls, v, at
}
