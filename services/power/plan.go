package power

import (
	"fmt"
	"time"

	"github.com/vmop/vmop/pkg/model"
)

// opKind is what a power operation does to the VM.
type opKind string

const (
	opPowerOn       opKind = "power on"
	opPowerOff      opKind = "power off"
	opSuspend       opKind = "suspend"
	opReset         opKind = "reset"
	opShutdownGuest opKind = "guest shutdown"
	opStandbyGuest  opKind = "guest standby"
	opRebootGuest   opKind = "guest reboot"
)

// soft reports that the operation asks the guest through VMware Tools.
func (k opKind) soft() bool {
	return k == opShutdownGuest || k == opStandbyGuest || k == opRebootGuest
}

// operation is one power operation: what, for which mode, and what to record in the VM
// before issuing it so that neither a redelivery nor a crash repeats it.
type operation struct {
	kind opKind
	mode model.PowerOpMode
	// fallback is the hard operation TrySoft runs at once when the guest call fails.
	fallback opKind
	// pending is the soft power-off or suspend being asked for, with its deadline.
	pending *softPending
	// restart is the spec.nextRestartTime this operation carries out (zero for none).
	restart time.Time
}

// desire is what the spec asks of the VM's power.
type desire struct {
	state                                  model.PowerState
	generation                             int64
	gate                                   gate
	powerOffMode, suspendMode, restartMode model.PowerOpMode
	restartAt                              time.Time     // spec.nextRestartTime, zero when none
	softTimeout                            time.Duration // how long the guest is given before TrySoft acts hard
	softRetry                              time.Duration // how soon a soft operation waiting for VMware Tools is tried again
}

// vmState is what plan reads of the VM.
type vmState struct {
	power        model.PowerState
	toolsRunning bool
	lastRestart  time.Time   // vcenter.KeyLastRestart, zero when never restarted
	pending      softPending // vcenter.KeySoftPower, zero when none
	// restartingSince is vcenter.KeyRestarting: a restart was recorded at this time of
	// vCenter's or later, its operation not known to have run; zero when none.
	restartingSince time.Time
}

// decision is plan's answer: an operation to run, or why there is none and when to look
// again (zero: when something changes).
type decision struct {
	op   *operation
	why  string
	wake time.Time
	// restartWhy: a restart requested of a VM in its desired state is held back.
	restartWhy string
}

// plan decides what takes the VM from its state to the desired one at now (api-rules
// §7.1, execution semantics); the gate only holds back a power-on.
func plan(d desire, vm vmState, now time.Time) decision {
	switch {
	case vm.power == "":
		return decision{why: "the VM's power state is unknown"}
	case vm.power == d.state && d.state == model.PowerStateOn:
		return planRestart(d, vm, now)
	case vm.power == d.state:
		return decision{}
	}
	switch d.state {
	case model.PowerStateOn:
		g := d.gate
		if vm.power == model.PowerStateSuspended {
			g = g.resuming()
		}
		if !g.open() {
			return decision{} // the gate's checks and waits say why
		}
		op := &operation{kind: opPowerOn, mode: model.PowerOpModeHard}
		if vm.power == model.PowerStateOff && restartDue(d, vm, now) {
			op.restart = d.restartAt // a fresh boot is the restart asked for
		}
		return decision{op: op}
	case model.PowerStateOff:
		if vm.power == model.PowerStateSuspended {
			// A suspended guest cannot answer: TrySoft acts hard, Soft cannot act.
			if mode(d.powerOffMode) == model.PowerOpModeSoft {
				return decision{why: "a suspended VM cannot be shut down by its guest: powerOffMode Soft needs Hard or TrySoft"}
			}
			return decision{op: &operation{kind: opPowerOff, mode: mode(d.powerOffMode)}}
		}
		return planSoft(d, vm, now, softOp{field: "powerOffMode", mode: mode(d.powerOffMode), soft: opShutdownGuest, hard: opPowerOff, verb: "shut down"})
	case model.PowerStateSuspended:
		if vm.power != model.PowerStateOn {
			return decision{why: "only a powered-on VM can be suspended"}
		}
		return planSoft(d, vm, now, softOp{field: "suspendMode", mode: mode(d.suspendMode), soft: opStandbyGuest, hard: opSuspend, verb: "go to standby"})
	}
	return decision{why: "unknown desired power state"}
}

// softOp names a power-off or suspend by mode.
type softOp struct {
	field      string // the spec field choosing the mode
	mode       model.PowerOpMode
	soft, hard opKind
	verb       string // what the guest is asked to do
}

// planSoft runs the guest operation once, records its deadline and waits for it; TrySoft
// turns hard once the deadline passed (or at once without VMware Tools, as upstream's
// failing guest call does), Soft asks the guest again.
func planSoft(d desire, vm vmState, now time.Time, s softOp) decision {
	if s.mode == model.PowerOpModeHard {
		return decision{op: &operation{kind: s.hard, mode: s.mode}}
	}
	p := vm.pending
	if p.target == d.state && p.current(d.generation, now) {
		if now.Before(p.deadline) {
			then := "; then asking again"
			if s.mode == model.PowerOpModeTrySoft {
				then = "; then acting hard (" + string(s.hard) + ")"
			}
			return decision{
				why:  fmt.Sprintf("waiting for the guest to %s (%s %s) until %s%s", s.verb, s.field, s.mode, p.deadline.UTC().Format(time.RFC3339), then),
				wake: p.deadline,
			}
		}
		if s.mode == model.PowerOpModeTrySoft {
			return decision{op: &operation{kind: s.hard, mode: s.mode}}
		}
	}
	if !vm.toolsRunning {
		if s.mode == model.PowerOpModeTrySoft {
			return decision{op: &operation{kind: s.hard, mode: s.mode}}
		}
		retry := now.Add(d.softRetry)
		return decision{
			why:  fmt.Sprintf("VMware Tools are not running: %s Soft needs them to %s the guest; trying again at %s", s.field, s.verb, retry.UTC().Format(time.RFC3339)),
			wake: retry,
		}
	}
	op := &operation{kind: s.soft, mode: s.mode, pending: &softPending{target: d.state, generation: d.generation, deadline: now.Add(d.softTimeout)}}
	if s.mode == model.PowerOpModeTrySoft {
		op.fallback = s.hard
	}
	return decision{op: op}
}

// restartDue: spec.nextRestartTime asks for a restart not carried out yet, and its time
// has come.
func restartDue(d desire, vm vmState, now time.Time) bool {
	return !d.restartAt.IsZero() && d.restartAt.After(vm.lastRestart) && !d.restartAt.After(now)
}

// planRestart restarts a running VM once per spec.nextRestartTime by restartMode.
func planRestart(d desire, vm vmState, now time.Time) decision {
	if d.restartAt.IsZero() || !d.restartAt.After(vm.lastRestart) {
		return decision{}
	}
	if d.restartAt.After(now) {
		return decision{wake: d.restartAt} // a clock ahead of ours stamped it
	}
	switch m := mode(d.restartMode); {
	case m == model.PowerOpModeHard, m == model.PowerOpModeTrySoft && !vm.toolsRunning:
		return decision{op: &operation{kind: opReset, mode: m, restart: d.restartAt}}
	case m == model.PowerOpModeTrySoft:
		return decision{op: &operation{kind: opRebootGuest, mode: m, fallback: opReset, restart: d.restartAt}}
	case vm.toolsRunning:
		return decision{op: &operation{kind: opRebootGuest, mode: m, restart: d.restartAt}}
	}
	retry := now.Add(d.softRetry)
	return decision{
		restartWhy: fmt.Sprintf("restart requested at %s waits: VMware Tools are not running, restartMode Soft needs them to reboot the guest; trying again at %s",
			d.restartAt.UTC().Format(time.RFC3339Nano), retry.UTC().Format(time.RFC3339)),
		wake: retry,
	}
}

// mode is m, TrySoft when unset (D1 defaults it; an older record may lack it).
func mode(m model.PowerOpMode) model.PowerOpMode {
	if m == "" {
		return model.PowerOpModeTrySoft
	}
	return m
}
