package power

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// modeProperties are what the modes and the resize read of a VM besides its power state:
// whether a guest operation can be asked for, what power recorded in the VM (single
// ExtraConfig keys, not the whole ExtraConfig, which holds the bootstrap data), and the
// host whose clock sizes a CPU policy in cores.
var modeProperties = []string{
	"guest.toolsRunningStatus", "runtime.host",
	`config.extraConfig["` + vcenter.KeyLastRestart + `"]`,
	`config.extraConfig["` + vcenter.KeySoftPower + `"]`,
	`config.extraConfig["` + vcenter.KeyRestarting + `"]`,
	vcenter.AdminPauseProperty,
	`config.extraConfig["` + vcenter.KeyAppliedClass + `"]`,
}

// softPending is a guest shutdown or standby that was asked for: to reach target, for the
// spec of generation, with the guest given until deadline.
type softPending struct {
	target     model.PowerState
	generation int64
	deadline   time.Time
}

// current tells whether p speaks about the request being applied: one made for the
// spec's generation, or one whose guest is still within its time (a spec edit while the
// guest works, e.g. a class change, neither asks it again nor restarts its time).
func (p softPending) current(generation int64, now time.Time) bool {
	return p.generation == generation || now.Before(p.deadline)
}

// String is p as recorded in the VM; "" (no value: vCenter removes the key) for none.
func (p softPending) String() string {
	if p == (softPending{}) {
		return ""
	}
	return fmt.Sprintf("%s %d %s", p.target, p.generation, p.deadline.UTC().Format(time.RFC3339Nano))
}

// parseSoftPending reads a vcenter.KeySoftPower value; a malformed one counts as none.
func parseSoftPending(v string) softPending {
	parts := strings.Fields(v)
	if len(parts) != 3 {
		return softPending{}
	}
	gen, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return softPending{}
	}
	deadline, err := time.Parse(time.RFC3339Nano, parts[2])
	if err != nil {
		return softPending{}
	}
	return softPending{target: model.PowerState(parts[0]), generation: gen, deadline: deadline}
}

// lastRestartValue is a restart time as upstream records it: nanoseconds since the epoch;
// "" (vCenter removes the key) for none.
func lastRestartValue(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return strconv.FormatInt(t.UnixNano(), 10)
}

// parseLastRestart reads a vcenter.KeyLastRestart value; zero when absent or malformed.
func parseLastRestart(v string) time.Time {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// toolsRunning reads guest.toolsRunningStatus.
func toolsRunning(status string) bool {
	return status == string(types.VirtualMachineToolsRunningStatusGuestToolsRunning)
}

// recorded reads into obs what power recorded in a VM's ExtraConfig.
func recorded(extraConfig []types.BaseOptionValue, obs *observation) {
	for _, o := range extraConfig {
		opt := o.GetOptionValue()
		v, _ := opt.Value.(string)
		switch opt.Key {
		case vcenter.KeyLastRestart:
			obs.modes.lastRestart = parseLastRestart(v)
		case vcenter.KeyRestarting:
			obs.modes.restartingSince, _ = time.Parse(time.RFC3339Nano, v) // malformed: none
		case vcenter.KeySoftPower:
			obs.modes.pending = parseSoftPending(v)
		case vcenter.KeyAppliedClass:
			obs.appliedClass = v
		}
	}
}

// errRefused: vCenter refused the operation (a fault, not a failure to reach it); the
// condition says why and the next change or resync looks again.
var errRefused = errors.New("refused")

// run records what op needs recorded in the VM, then issues it and waits for its task.
// A guest call vCenter refuses falls back to op.fallback (TrySoft) at once; one that meets
// another task is tried again later instead. was is the VM as plan read it: when vCenter
// did not start the operation (a fault), the records go back to what they were there, so
// that the restart or the guest request is made on the next try, not taken as done. An
// answer lost on the way keeps them: the operation may have run, and a restart's mark
// makes the next reconcile find out from vCenter's events (restart_check.go). ran: vCenter
// carried the operation out; the caller then clears what op.cleared names.
func run(ctx context.Context, vm *object.VirtualMachine, op *operation, was vmState) (ran bool, _ error) {
	var since time.Time // vCenter's clock before a restart's record (restart_check.go)
	if !op.restart.IsZero() {
		now, err := methods.GetCurrentTime(ctx, vm.Client())
		if err != nil {
			return false, classify("read vCenter's time", err)
		}
		since = *now
	}
	record, undo := op.records(was, since)
	if len(record) > 0 {
		if err := reconfigure(ctx, vm, record); err != nil {
			return false, classify(fmt.Sprintf("record the %s", op.kind), err)
		}
	}
	err := issue(ctx, vm, op.kind)
	if err != nil && op.fallback != "" && refusal(err) && !fault.Is(err, &types.InvalidPowerState{}) {
		err = issue(ctx, vm, op.fallback)
	}
	if len(undo) > 0 && vcenter.IsFault(err) && !fault.Is(err, &types.InvalidPowerState{}) {
		if uerr := takeBack(ctx, vm, undo); uerr != nil {
			return false, fmt.Errorf("take back the record of the %s vCenter did not start (%v): %w", op.kind, err, uerr)
		}
	}
	return err == nil, classify(string(op.kind), err)
}

// cleared are the ExtraConfig records that op ends once it ran: a restart's mark, which
// needs no checking after a crash any more (restart_check.go), and the guest standby asked
// before a resume, which a suspended VM could not be reconfigured to forget (records).
// Clearing them may fail (another task holds the VM): the restart's mark is then settled
// by the next reconcile, a standby record by the next power-off or power-on.
func (op *operation) cleared(was vmState) []types.BaseOptionValue {
	var out []types.BaseOptionValue
	if !op.restart.IsZero() {
		out = append(out, &types.OptionValue{Key: vcenter.KeyRestarting, Value: ""})
	}
	if op.kind == opPowerOn && was.power == model.PowerStateSuspended && was.pending != (softPending{}) {
		out = append(out, &types.OptionValue{Key: vcenter.KeySoftPower, Value: ""})
	}
	return out
}

// clearRecords writes records (each ending one of power's ExtraConfig records) to vm, for
// what (e.g. "a settled restart"). A failure is only logged: what it leaves is settled by
// a later reconcile (see operation.cleared, checkRestart).
func (r *reconciler) clearRecords(ctx context.Context, vm *object.VirtualMachine, records []types.BaseOptionValue, what string) {
	if len(records) == 0 {
		return
	}
	if err := reconfigure(ctx, vm, records); err != nil {
		r.log.Warn("clearing the records of "+what+" failed", "vm", vm.Reference().Value, "err", err)
	}
}

// takeBackFor bounds how long takeBack waits for another task to let the VM go.
const takeBackFor = 30 * time.Second

// takeBack restores the records of an operation vCenter did not start. The task that held
// the operation back may hold this reconfigure back too: it is tried again until that task
// lets the VM go, since a record left in place loses the operation.
func takeBack(ctx context.Context, vm *object.VirtualMachine, undo []types.BaseOptionValue) error {
	ctx, cancel := context.WithTimeout(ctx, takeBackFor)
	defer cancel()
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		err := reconfigure(ctx, vm, undo)
		if !fault.Is(err, &types.TaskInProgress{}) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// records are the ExtraConfig values op sets before it is issued, so that neither a
// redelivery nor a restart of the service repeats it, and the values they replace in was.
// A restart is also marked, with vCenter's time since before its record, until its
// operation ran: a crash in between is found out and settled (restart_check.go).
func (op *operation) records(was vmState, since time.Time) (record, undo []types.BaseOptionValue) {
	if !op.restart.IsZero() {
		record = append(record, &types.OptionValue{Key: vcenter.KeyLastRestart, Value: lastRestartValue(op.restart)},
			&types.OptionValue{Key: vcenter.KeyRestarting, Value: since.UTC().Format(time.RFC3339Nano)})
		undo = append(undo, &types.OptionValue{Key: vcenter.KeyLastRestart, Value: lastRestartValue(was.lastRestart)},
			&types.OptionValue{Key: vcenter.KeyRestarting, Value: ""})
	}
	if op.pending != nil {
		record = append(record, &types.OptionValue{Key: vcenter.KeySoftPower, Value: op.pending.String()})
		undo = append(undo, &types.OptionValue{Key: vcenter.KeySoftPower, Value: was.pending.String()})
	}
	if op.kind == opPowerOn && was.power == model.PowerStateOff && was.pending != (softPending{}) {
		// A power-on ends the guest shutdown or standby asked before it: the next power-off
		// or suspend asks the guest anew, with a time of its own, rather than waiting out
		// the old one's. A resume clears it after the power-on (cleared): a suspended VM
		// cannot be reconfigured.
		record = append(record, &types.OptionValue{Key: vcenter.KeySoftPower, Value: ""})
		undo = append(undo, &types.OptionValue{Key: vcenter.KeySoftPower, Value: was.pending.String()})
	}
	return record, undo
}

// reconfigure sets ExtraConfig values and waits for the task.
func reconfigure(ctx context.Context, vm *object.VirtualMachine, values []types.BaseOptionValue) error {
	task, err := vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{ExtraConfig: values})
	if err == nil {
		_, err = vcenter.WaitTask(ctx, task)
	}
	return err
}

// issue starts one operation and waits for its task; guest operations have none.
func issue(ctx context.Context, vm *object.VirtualMachine, kind opKind) error {
	var task *object.Task
	var err error
	switch kind {
	case opPowerOn:
		task, err = vm.PowerOn(ctx)
	case opPowerOff:
		task, err = vm.PowerOff(ctx)
	case opSuspend:
		task, err = vm.Suspend(ctx)
	case opReset:
		task, err = vm.Reset(ctx)
	case opShutdownGuest:
		return vm.ShutdownGuest(ctx)
	case opStandbyGuest:
		return vm.StandbyGuest(ctx)
	case opRebootGuest:
		return vm.RebootGuest(ctx)
	default:
		return fmt.Errorf("unknown power operation %q", kind)
	}
	if err != nil {
		return err
	}
	_, err = vcenter.WaitTask(ctx, task)
	return err
}

// classify turns an operation's error into: nil (done, or the VM's state changed under
// us: look again either way), errRefused wrapped with vCenter's reason (for the
// condition), or an error to retry (vCenter unreachable, another task in the way).
func classify(what string, err error) error {
	switch {
	case err == nil, fault.Is(err, &types.InvalidPowerState{}):
		return nil
	case !refusal(err):
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%w: %s failed: %v", errRefused, what, err)
}

// refusal reports that err is vCenter refusing the operation for what it asks: a fault,
// but not TaskInProgress, which only says another task holds the VM now (a retry's).
func refusal(err error) bool {
	return vcenter.IsFault(err) && !fault.Is(err, &types.TaskInProgress{})
}

// modeConfig is the service's configuration of the modes.
type modeConfig struct {
	trySoftTimeout time.Duration // Config.TrySoftTimeout
	softRetry      time.Duration // Config.SoftRetry
}

// desire reads what vm's spec asks of its power; state is the desired power state.
func (r *reconciler) desire(o reconcile.Object, vm model.VirtualMachine, state model.PowerState, g gate) desire {
	d := desire{
		state: state, generation: o.Meta.Generation, gate: g,
		powerOffMode: vm.Spec.PowerOffMode, suspendMode: vm.Spec.SuspendMode, restartMode: vm.Spec.RestartMode,
		softTimeout: r.modes.trySoftTimeout, softRetry: r.modes.softRetry,
	}
	if v, ok := o.Meta.Annotations[model.AnnotationTrySoftTimeout]; ok {
		if t, why := model.ParseTrySoftTimeout(v); why == "" {
			d.softTimeout = t
		} else {
			r.log.Warn("ignoring the TrySoft timeout annotation", "object", o.Ref.String(), "value", v, "why", why)
		}
	}
	if v := vm.Spec.NextRestartTime; v != "" {
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			d.restartAt = t
		} else {
			r.log.Warn("ignoring an unreadable nextRestartTime", "object", o.Ref.String(), "value", v)
		}
	}
	return d
}

// softReached: a guest operation vmop asked for under the spec of generation took the VM
// where it was asked to, so the change is vmop's doing.
func (o observation) softReached(generation int64) bool {
	p := o.modes.pending
	return o.power != "" && p.target == o.power && p.current(generation, time.Now())
}
