package power

import (
	"strings"
	"testing"
	"time"

	"github.com/vmop/vmop/pkg/model"
)

func TestPlan(t *testing.T) {
	const (
		on      = model.PowerStateOn
		off     = model.PowerStateOff
		sus     = model.PowerStateSuspended
		hard    = model.PowerOpModeHard
		soft    = model.PowerOpModeSoft
		trySoft = model.PowerOpModeTrySoft
	)
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	const timeout, retry = time.Minute, 10 * time.Second
	checked := gate{checks: map[string]string{"backup": ""}}
	waiting := gate{waits: []string{"VirtualMachineStorageReady (not reported by storage)"}}
	customizing := gate{waits: []string{"VirtualMachineBootstrapReady (False NotReady: LinuxPrep: the changed guest customization is applied before the next power-on, once the VM is off)"}}
	want := func(kind opKind, m model.PowerOpMode) *operation { return &operation{kind: kind, mode: m} }

	tests := []struct {
		name string
		d    desire
		vm   vmState
		op   *operation // nil for none
		why  string     // a part of decision.why or restartWhy
		wake time.Time
	}{
		{name: "on when on", d: desire{state: on, gate: checked}, vm: vmState{power: on}},
		{name: "on from off", d: desire{state: on}, vm: vmState{power: off}, op: want(opPowerOn, hard)},
		{name: "resume from suspended", d: desire{state: on}, vm: vmState{power: sus}, op: want(opPowerOn, hard)},
		{name: "on blocked by a check", d: desire{state: on, gate: checked}, vm: vmState{power: off}},
		{name: "on waits for inputs", d: desire{state: on, gate: waiting}, vm: vmState{power: off}},
		{name: "a boot waits for the bootstrap", d: desire{state: on, gate: customizing}, vm: vmState{power: off}},
		{name: "a resume does not: it boots nothing", d: desire{state: on, gate: customizing}, vm: vmState{power: sus}, op: want(opPowerOn, hard)},
		{name: "nor waits for what needs the VM off", d: desire{state: on, gate: waiting}, vm: vmState{power: sus}, op: want(opPowerOn, hard)},
		{name: "a resume is held by a check", d: desire{state: on, gate: checked}, vm: vmState{power: sus}},
		{name: "unknown power state", d: desire{state: off}, vm: vmState{}, why: "unknown"},

		{name: "off Hard", d: desire{state: off, powerOffMode: hard, gate: checked}, vm: vmState{power: on}, op: want(opPowerOff, hard)},
		{name: "off from suspended Hard", d: desire{state: off, powerOffMode: hard}, vm: vmState{power: sus}, op: want(opPowerOff, hard)},
		{name: "off from suspended TrySoft acts hard", d: desire{state: off, powerOffMode: trySoft}, vm: vmState{power: sus, toolsRunning: true}, op: want(opPowerOff, trySoft)},
		{name: "off from suspended Soft cannot", d: desire{state: off, powerOffMode: soft}, vm: vmState{power: sus, toolsRunning: true}, why: "powerOffMode Soft needs Hard or TrySoft"},
		{name: "off when off", d: desire{state: off}, vm: vmState{power: off}},
		{name: "off Soft with tools asks the guest", d: desire{state: off, generation: 3, powerOffMode: soft, softTimeout: timeout}, vm: vmState{power: on, toolsRunning: true},
			op: &operation{kind: opShutdownGuest, mode: soft, pending: &softPending{target: off, generation: 3, deadline: now.Add(timeout)}}},
		{name: "off Soft without tools waits for them", d: desire{state: off, powerOffMode: soft, softRetry: retry}, vm: vmState{power: on},
			why: "VMware Tools are not running: powerOffMode Soft needs them", wake: now.Add(retry)},
		{name: "off TrySoft with tools asks the guest, hard as fallback", d: desire{state: off, generation: 3, powerOffMode: trySoft, softTimeout: timeout}, vm: vmState{power: on, toolsRunning: true},
			op: &operation{kind: opShutdownGuest, mode: trySoft, fallback: opPowerOff, pending: &softPending{target: off, generation: 3, deadline: now.Add(timeout)}}},
		{name: "off TrySoft without tools is hard at once", d: desire{state: off, powerOffMode: trySoft}, vm: vmState{power: on}, op: want(opPowerOff, trySoft)},
		{name: "off unset mode is TrySoft", d: desire{state: off}, vm: vmState{power: on}, op: want(opPowerOff, trySoft)},
		{name: "off TrySoft waits for the guest until the deadline", d: desire{state: off, generation: 3, powerOffMode: trySoft},
			vm:  vmState{power: on, toolsRunning: true, pending: softPending{target: off, generation: 3, deadline: now.Add(time.Second)}},
			why: "waiting for the guest to shut down (powerOffMode TrySoft) until 2025-06-01T12:00:01Z; then acting hard (power off)", wake: now.Add(time.Second)},
		{name: "off TrySoft past the deadline is hard", d: desire{state: off, generation: 3, powerOffMode: trySoft},
			vm: vmState{power: on, toolsRunning: true, pending: softPending{target: off, generation: 3, deadline: now}}, op: want(opPowerOff, trySoft)},
		{name: "off Soft past the deadline asks again", d: desire{state: off, generation: 3, powerOffMode: soft, softTimeout: timeout},
			vm: vmState{power: on, toolsRunning: true, pending: softPending{target: off, generation: 3, deadline: now}},
			op: &operation{kind: opShutdownGuest, mode: soft, pending: &softPending{target: off, generation: 3, deadline: now.Add(timeout)}}},
		{name: "a spec edit while the guest works keeps its wait", d: desire{state: off, generation: 4, powerOffMode: trySoft, softTimeout: timeout},
			vm:  vmState{power: on, toolsRunning: true, pending: softPending{target: off, generation: 3, deadline: now.Add(time.Second)}},
			why: "waiting for the guest to shut down (powerOffMode TrySoft) until 2025-06-01T12:00:01Z; then acting hard (power off)", wake: now.Add(time.Second)},
		{name: "a pending request of an older generation is not this one's", d: desire{state: off, generation: 4, powerOffMode: trySoft, softTimeout: timeout},
			vm: vmState{power: on, toolsRunning: true, pending: softPending{target: off, generation: 3, deadline: now}},
			op: &operation{kind: opShutdownGuest, mode: trySoft, fallback: opPowerOff, pending: &softPending{target: off, generation: 4, deadline: now.Add(timeout)}}},

		{name: "suspend Hard", d: desire{state: sus, suspendMode: hard}, vm: vmState{power: on}, op: want(opSuspend, hard)},
		{name: "suspend Soft asks for standby", d: desire{state: sus, generation: 2, suspendMode: soft, softTimeout: timeout}, vm: vmState{power: on, toolsRunning: true},
			op: &operation{kind: opStandbyGuest, mode: soft, pending: &softPending{target: sus, generation: 2, deadline: now.Add(timeout)}}},
		{name: "suspend TrySoft without tools is hard", d: desire{state: sus, suspendMode: trySoft}, vm: vmState{power: on}, op: want(opSuspend, trySoft)},
		{name: "suspend from off is impossible", d: desire{state: sus}, vm: vmState{power: off}, why: "only a powered-on VM can be suspended"},

		{name: "restart Hard resets", d: desire{state: on, restartMode: hard, restartAt: now.Add(-time.Second)}, vm: vmState{power: on},
			op: &operation{kind: opReset, mode: hard, restart: now.Add(-time.Second)}},
		{name: "restart already done", d: desire{state: on, restartMode: hard, restartAt: now.Add(-time.Second)}, vm: vmState{power: on, lastRestart: now.Add(-time.Second)}},
		{name: "an older restart time is done too", d: desire{state: on, restartAt: now.Add(-time.Hour)}, vm: vmState{power: on, lastRestart: now.Add(-time.Second)}},
		{name: "restart in the future waits for its time", d: desire{state: on, restartAt: now.Add(time.Second)}, vm: vmState{power: on}, wake: now.Add(time.Second)},
		{name: "restart Soft reboots the guest", d: desire{state: on, restartMode: soft, restartAt: now}, vm: vmState{power: on, toolsRunning: true},
			op: &operation{kind: opRebootGuest, mode: soft, restart: now}},
		{name: "restart Soft without tools waits", d: desire{state: on, restartMode: soft, restartAt: now, softRetry: retry}, vm: vmState{power: on},
			why: "VMware Tools are not running, restartMode Soft needs them", wake: now.Add(retry)},
		{name: "restart TrySoft reboots the guest, reset as fallback", d: desire{state: on, restartAt: now}, vm: vmState{power: on, toolsRunning: true},
			op: &operation{kind: opRebootGuest, mode: trySoft, fallback: opReset, restart: now}},
		{name: "restart TrySoft without tools resets", d: desire{state: on, restartAt: now}, vm: vmState{power: on},
			op: &operation{kind: opReset, mode: trySoft, restart: now}},
		{name: "a power-on after the restart time is the restart", d: desire{state: on, restartAt: now}, vm: vmState{power: off},
			op: &operation{kind: opPowerOn, mode: hard, restart: now}},
		{name: "a resume is no restart", d: desire{state: on, restartAt: now}, vm: vmState{power: sus}, op: want(opPowerOn, hard)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := plan(tt.d, tt.vm, now)
			if !sameOperation(got.op, tt.op) {
				t.Errorf("operation = %+v, want %+v", got.op, tt.op)
			}
			why := got.why + got.restartWhy
			if (tt.why == "") != (why == "") || !strings.Contains(why, tt.why) {
				t.Errorf("why = %q, want it to contain %q", why, tt.why)
			}
			if !got.wake.Equal(tt.wake) {
				t.Errorf("wake = %v, want %v", got.wake, tt.wake)
			}
		})
	}
}

func sameOperation(a, b *operation) bool {
	if a == nil || b == nil {
		return a == b
	}
	if (a.pending == nil) != (b.pending == nil) || (a.pending != nil && *a.pending != *b.pending) {
		return false
	}
	return a.kind == b.kind && a.mode == b.mode && a.fallback == b.fallback && a.restart.Equal(b.restart)
}

func TestSoftPendingRoundTrip(t *testing.T) {
	p := softPending{target: model.PowerStateSuspended, generation: 7, deadline: time.Date(2025, 6, 1, 12, 0, 0, 5, time.UTC)}
	if got := parseSoftPending(p.String()); got != p {
		t.Errorf("parse(%q) = %+v, want %+v", p.String(), got, p)
	}
	for _, bad := range []string{"", "PoweredOff", "PoweredOff x 2025-06-01T12:00:00Z", "PoweredOff 1 noon"} {
		if got := parseSoftPending(bad); got != (softPending{}) {
			t.Errorf("parse(%q) = %+v, want none", bad, got)
		}
	}
	at := time.Date(2025, 6, 1, 12, 0, 0, 123456789, time.UTC)
	if got := parseLastRestart(lastRestartValue(at)); !got.Equal(at) {
		t.Errorf("last restart round trip = %v, want %v", got, at)
	}
}
