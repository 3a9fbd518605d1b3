package power_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
	"github.com/vmop/vmop/services/power"
)

// The vCenter methods behind each operation.
const (
	callPowerOff    = "PowerOffVM_Task"
	callSuspend     = "SuspendVM_Task"
	callReset       = "ResetVM_Task"
	callShutdown    = "ShutdownGuest"
	callStandby     = "StandbyGuest"
	callReboot      = "RebootGuest"
	callReconfigure = "ReconfigVM_Task"
	callPowerOn     = "PowerOnVM_Task"
)

// Power-off and suspend by mode, with VMware Tools running and not: Soft asks the guest
// and, without Tools, says so and tries again until they run; TrySoft asks the guest
// when it can and is hard at once when it cannot (as upstream, whose guest call fails).
func TestGuestOperationsByMode(t *testing.T) {
	h := startWith(t, power.Config{SoftRetry: 200 * time.Millisecond})
	calls := h.watchCalls()
	tests := []struct {
		desired  model.PowerState
		mode     model.PowerOpMode
		tools    bool
		call     string // the one power call expected
		waitTool string // Soft without Tools: what the condition says until they run
	}{
		{model.PowerStateOff, model.PowerOpModeSoft, true, callShutdown, ""},
		{model.PowerStateOff, model.PowerOpModeSoft, false, callShutdown, "VMware Tools are not running: powerOffMode Soft needs them to shut down the guest"},
		{model.PowerStateOff, model.PowerOpModeTrySoft, true, callShutdown, ""},
		{model.PowerStateOff, model.PowerOpModeTrySoft, false, callPowerOff, ""},
		{model.PowerStateSuspended, model.PowerOpModeSoft, true, callStandby, ""},
		{model.PowerStateSuspended, model.PowerOpModeSoft, false, callStandby, "VMware Tools are not running: suspendMode Soft needs them to go to standby the guest"},
		{model.PowerStateSuspended, model.PowerOpModeTrySoft, true, callStandby, ""},
		{model.PowerStateSuspended, model.PowerOpModeTrySoft, false, callSuspend, ""},
	}
	for i, tt := range tests {
		name := fmt.Sprintf("%s %s tools=%v", tt.desired, tt.mode, tt.tools)
		t.Run(name, func(t *testing.T) {
			defer h.use(t)()
			v := h.powered(fmt.Sprintf("mode-%d", i))
			if tt.tools {
				h.fakeTools(v)
			}
			h.change(v, func(vm *model.VirtualMachine) {
				vm.Spec.PowerState, vm.Spec.PowerOffMode, vm.Spec.SuspendMode = tt.desired, tt.mode, tt.mode
			})
			if tt.waitTool != "" {
				h.waitStatus(v, "waiting for Tools", notSynced(model.ReasonNotSynced, "desired "+string(tt.desired)+", observed PoweredOn: "+tt.waitTool))
				if got := h.vcPower(v); got != types.VirtualMachinePowerStatePoweredOn {
					t.Fatalf("VM is %s while Soft waits for Tools, want poweredOn", got)
				}
				h.fakeTools(v)
			}
			h.waitStatus(v, string(tt.desired), synced(tt.desired))
			for _, call := range []string{callPowerOff, callSuspend, callShutdown, callStandby} {
				want := 0
				if call == tt.call {
					want = 1
				}
				if n := calls.count(v, call); n != want {
					t.Errorf("%s called %d times, want %d", call, n, want)
				}
			}
			typ := events.TypeVirtualMachinePoweredOff
			if tt.desired == model.PowerStateSuspended {
				typ = events.TypeVirtualMachineSuspended
			}
			var data map[string]any
			if err := json.Unmarshal(h.waitEvent(v, typ).Data, &data); err != nil {
				t.Fatal(err)
			}
			if data["outOfBand"] != nil {
				t.Errorf("%s event says out of band: %v", typ, data)
			}
		})
	}
}

// A guest that ignores the shutdown is powered off hard once the VM's TrySoft timeout
// (its annotation, overriding the service's five minutes) has passed, not before.
func TestTrySoftFallsBackToHard(t *testing.T) {
	h := start(t)
	calls := h.watchCalls()
	v := h.powered("deaf")
	h.fakeTools(v)
	calls.makeDeaf(v)
	h.change(v, func(vm *model.VirtualMachine) {
		vm.Annotations = map[string]string{model.AnnotationTrySoftTimeout: "2s"}
		vm.Spec.PowerState, vm.Spec.PowerOffMode = model.PowerStateOff, model.PowerOpModeTrySoft
	})
	due := h.waitFallback(v, calls)
	if off := calls.times(v, callPowerOff)[0]; off.Sub(due) > 2*time.Second {
		t.Errorf("powered off hard %v after the deadline", off.Sub(due))
	}
}

// The service is killed while the guest has until its deadline; started again, it
// falls back on time, without asking the guest again.
func TestTrySoftDeadlineSurvivesRestart(t *testing.T) {
	h := startWith(t, power.Config{TrySoftTimeout: 3 * time.Second})
	calls := h.watchCalls()
	v := h.powered("restarted")
	h.fakeTools(v)
	calls.makeDeaf(v)
	h.change(v, func(vm *model.VirtualMachine) { vm.Spec.PowerState = model.PowerStateOff }) // TrySoft by default

	h.waitStatus(v, "waiting for the guest", notSynced(model.ReasonNotSynced, "waiting for the guest to shut down (powerOffMode TrySoft) until"))
	h.stopIdle(v)
	h.run()
	due := h.waitFallback(v, calls)
	if off := calls.times(v, callPowerOff)[0]; off.Sub(due) > 2*time.Second {
		t.Errorf("powered off hard %v after the deadline", off.Sub(due))
	}
}

// waitFallback waits for v, whose deaf guest was asked to shut down, to be powered off
// hard, checks that it was not before the deadline recorded in the VM, and returns it.
func (h *harness) waitFallback(v *testVM, calls *vcCalls) time.Time {
	h.t.Helper()
	waiting := h.waitStatus(v, "waiting for the guest", notSynced(model.ReasonNotSynced, "waiting for the guest to shut down (powerOffMode TrySoft) until", "then acting hard (power off)"))
	recorded := strings.Fields(h.extraConfig(v, vcenter.KeySoftPower))
	if len(recorded) != 3 || recorded[0] != string(model.PowerStateOff) {
		h.t.Fatalf("%s = %q, want PoweredOff <generation> <deadline>", vcenter.KeySoftPower, recorded)
	}
	due, err := time.Parse(time.RFC3339Nano, recorded[2])
	if err != nil {
		h.t.Fatal(err)
	}
	if msg := powerCondition(waiting).Message; !strings.Contains(msg, due.UTC().Format(time.RFC3339)) {
		h.t.Errorf("condition %q does not name the deadline %s", msg, due)
	}
	h.waitStatus(v, "powered off hard", synced(model.PowerStateOff))
	off := calls.times(v, callPowerOff)
	if len(off) != 1 || off[0].Before(due) {
		h.t.Errorf("power-off calls at %v, want one after the deadline %v", off, due)
	}
	if n := calls.count(v, callShutdown); n != 1 {
		h.t.Errorf("guest asked to shut down %d times, want once", n)
	}
	return due
}

// A restart asked for once restarts the VM once by restartMode, however often the
// object is delivered, and status.lastRestartTime reports it.
func TestRestartOnce(t *testing.T) {
	h := startWith(t, power.Config{SoftRetry: 200 * time.Millisecond})
	calls := h.watchCalls()
	tests := []struct {
		mode  model.PowerOpMode
		tools bool
		call  string
	}{
		{model.PowerOpModeHard, true, callReset},
		{model.PowerOpModeSoft, true, callReboot},
		{model.PowerOpModeTrySoft, true, callReboot},
		{model.PowerOpModeTrySoft, false, callReset},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprintf("%s tools=%v", tt.mode, tt.tools), func(t *testing.T) {
			defer h.use(t)()
			v := h.powered(fmt.Sprintf("restart-%d", i))
			if tt.tools {
				h.fakeTools(v)
			}
			at := h.askRestart(v, tt.mode)
			h.waitRestarted(v, at)
			// Delivered again: the same record stored once more, then reconciled by two
			// more reconcilers after the service stopped.
			h.putSpec(v)
			h.stop()
			for range 2 {
				if err := power.ReconcileOnce(h.ctx, h.cfg, v.ref); err != nil {
					t.Fatal(err)
				}
			}
			h.run()
			if n := calls.count(v, tt.call); n != 1 {
				t.Errorf("%s called %d times, want once", tt.call, n)
			}
			if n := calls.count(v, callReset) + calls.count(v, callReboot); n != 1 {
				t.Errorf("%d restarts, want one", n)
			}
			if got, want := h.extraConfig(v, vcenter.KeyLastRestart), fmt.Sprint(at.UnixNano()); got != want {
				t.Errorf("%s = %q, want %q", vcenter.KeyLastRestart, got, want)
			}
		})
	}
}

// A Soft restart without VMware Tools says so and happens once they run.
func TestSoftRestartWaitsForTools(t *testing.T) {
	h := startWith(t, power.Config{SoftRetry: 200 * time.Millisecond})
	calls := h.watchCalls()
	v := h.powered("soft-restart")
	at := h.askRestart(v, model.PowerOpModeSoft)
	h.waitStatus(v, "waiting for Tools", notSynced(model.ReasonNotSynced,
		"desired PoweredOn, observed PoweredOn: restart requested at "+at.Format(time.RFC3339Nano)+" waits: VMware Tools are not running, restartMode Soft needs them"))
	if n := calls.count(v, callReboot) + calls.count(v, callReset); n != 0 {
		t.Fatalf("%d restarts without Tools, want none", n)
	}
	h.fakeTools(v)
	got := h.waitStatus(v, "restarted", func(s sliceStatus) bool { return s.Status.LastRestartTime != nil })
	if c := powerCondition(got); c.Status != metav1.ConditionTrue {
		t.Errorf("condition after the restart: %+v", c)
	}
	if n := calls.count(v, callReboot); n != 1 {
		t.Errorf("guest rebooted %d times, want once", n)
	}
}

// A power-off or suspend asked for again after the VM was powered on (resumed) in
// between asks the guest at once, however long the first one's guest had: the power-on
// ended that request.
func TestSecondTrySoftAsksTheGuestAgain(t *testing.T) {
	h := start(t) // the guest has five minutes
	calls := h.watchCalls()
	for _, tt := range []struct {
		desired      model.PowerState
		guest, hard  string
		guestRequest string
	}{
		{model.PowerStateOff, callShutdown, callPowerOff, "shut down"},
		{model.PowerStateSuspended, callStandby, callSuspend, "go to standby"},
	} {
		t.Run(string(tt.desired), func(t *testing.T) {
			defer h.use(t)()
			v := h.powered("twice-" + strings.ToLower(string(tt.desired)))
			h.fakeTools(v)
			leave := func() {
				h.change(v, func(vm *model.VirtualMachine) { vm.Spec.PowerState = tt.desired }) // TrySoft by default
				h.waitStatus(v, string(tt.desired), synced(tt.desired))
			}
			leave()
			h.change(v, func(vm *model.VirtualMachine) { vm.Spec.PowerState = model.PowerStateOn })
			h.readyInputs(v)
			h.waitStatus(v, "PoweredOn", synced(model.PowerStateOn))
			h.fakeTools(v)
			leave()
			if n := calls.count(v, tt.guest); n != 2 {
				t.Errorf("the guest was asked to %s %d times, want 2", tt.guestRequest, n)
			}
			if n := calls.count(v, tt.hard); n != 0 {
				t.Errorf("%s called %d times, want 0", tt.hard, n)
			}
		})
	}
}
