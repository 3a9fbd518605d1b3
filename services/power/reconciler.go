package power

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// powerStatus is power's slice of a VirtualMachine's .status (DESIGN §4, api-rules §3).
type powerStatus struct {
	PowerState model.PowerState                    `json:"powerState,omitempty"`
	Hardware   *model.VirtualMachineHardwareStatus `json:"hardware,omitempty"` // cpu and memory
	Guest      *model.VirtualMachineGuestStatus    `json:"guest,omitempty"`
	Conditions []metav1.Condition                  `json:"conditions,omitempty"`
}

// reconciler drives VMs' power; its reconciles and the vCenter watch share the index.
type reconciler struct {
	js    jetstream.JetStream
	vc    *govmomi.Client
	index *vmIndex
	log   *slog.Logger
	// requestAt reconciles a VM again at an instant: the one its group gave it.
	requestAt func(ctx context.Context, ref events.Ref, at time.Time)
}

// previous is power's own last slice about the object: the state the events compare with.
type previous struct {
	seq    uint64 // its STATUS sequence, 0 when none: part of the event ids
	status powerStatus
	raw    json.RawMessage
}

// reconcile brings the VM's power state to spec.powerState once nothing holds it back,
// and reports what vCenter shows.
func (r *reconciler) reconcile(ctx context.Context, o reconcile.Object) (reconcile.Result, error) {
	prev, err := r.previous(ctx, o)
	if err != nil {
		return reconcile.Result{}, err
	}
	if o.Deleting() {
		// Placement powers the VM off and destroys it; power holds nothing back.
		r.index.forget(o.Ref)
		res := reconcile.Result{Released: true}
		if prev.raw != nil {
			res.Status = prev.raw // what was last seen stays visible until the object goes
		}
		return res, nil
	}
	var vm model.VirtualMachine
	if err := json.Unmarshal(o.Spec.Body, &vm); err != nil {
		return reconcile.Result{}, fmt.Errorf("%w: decode %s: %v", events.ErrPermanent, o.Ref, err)
	}
	in := readInputs(o)
	st := syncState{desired: vm.Spec.PowerState}
	if st.desired == "" {
		st.desired = model.PowerStateOn // D4 defaults it on create; an older record may lack it
	}
	g := gate{checks: pendingChecks(o.Meta.Annotations), waits: unmetPrerequisites(o, in, vm.Spec.Network != nil && vm.Spec.Network.Disabled)}
	if st.desired == model.PowerStateOn {
		st.checks, st.waits = g.checks, g.waits
	}

	obs, err := r.locate(ctx, o.Ref, vm.Spec.InstanceUUID, in[model.ServicePlacement], &st)
	if err != nil {
		return reconcile.Result{}, err
	}
	n := notifier{js: r.js, ref: o.Ref, uid: o.Meta.UID}
	if obs.power != "" && prev.status.PowerState != "" && obs.power != prev.status.PowerState {
		// The VM changed behind vmop's back: record that before acting on it.
		if prev, err = r.record(ctx, o, n, prev, obs, st); err != nil {
			return reconcile.Result{}, err
		}
	}
	// Resize by class and guest ID (resize*.go, guest.go): only while off, before any power-on.
	obs, rc, err := r.reconfigure(ctx, o, &vm, obs, prev.status.Conditions)
	if err != nil {
		return reconcile.Result{}, err
	}
	rc.hold(&g, &st)
	// End of resize by class and guest ID.
	before, ran := obs.power, false
	if obs.vm != nil && !r.holdForGroup(ctx, o, &st) {
		if obs, ran, err = r.apply(ctx, obs, &st, g); err != nil {
			return reconcile.Result{}, err
		}
	}
	st.observed = obs.power
	status := r.status(o, prev, obs, st)
	status.Conditions = rc.conditions(status.Conditions, prev.status.Conditions, o.Meta.Generation) // resize_reconfigure.go
	err = n.notify(ctx, step{fromSeq: prev.seq, from: prev.status, previous: before, to: status, st: st, uniqueID: obs.uniqueID(), byVMOP: ran})
	if err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{Status: status}, nil
}

// status is power's slice for what obs shows and st says.
func (r *reconciler) status(o reconcile.Object, prev previous, obs observation, st syncState) powerStatus {
	conds := reconcile.NewConditionSet(prev.status.Conditions, o.Meta.Generation, time.Now())
	c := st.condition()
	conds.Set(c.Type, c.Status, c.Reason, c.Message)
	return powerStatus{PowerState: obs.power, Hardware: obs.hardware, Guest: obs.guest, Conditions: conds.List()}
}

// record publishes the slice and the events of a change vmop did not make, so that the
// correction that follows is a step of its own. It returns the new previous slice.
func (r *reconciler) record(ctx context.Context, o reconcile.Object, n notifier, prev previous, obs observation, st syncState) (previous, error) {
	st.observed = obs.power
	seen := r.status(o, prev, obs, st)
	err := n.notify(ctx, step{fromSeq: prev.seq, from: prev.status, previous: prev.status.PowerState, to: seen, st: st, uniqueID: obs.uniqueID()})
	if err != nil {
		return prev, err
	}
	raw, err := json.Marshal(seen)
	if err != nil {
		return prev, fmt.Errorf("%w: encode status of %s: %v", events.ErrPermanent, o.Ref, err)
	}
	seq, err := events.PublishStatus(ctx, r.js, o.Ref, events.Slice{
		Service: model.ServicePower, UID: o.Meta.UID, Generation: o.Meta.Generation, Status: raw,
	})
	if err != nil {
		return prev, fmt.Errorf("record the out-of-band change of %s: %w", o.Ref, err)
	}
	return previous{seq: seq, status: seen, raw: raw}, nil
}

// locate observes the VM once placement reports it created; what keeps it from being
// observed goes into st.
func (r *reconciler) locate(ctx context.Context, ref events.Ref, instanceUUID string, placed inputStatus, st *syncState) (observation, error) {
	created := reconcile.FindCondition(placed.Conditions, model.ConditionCreated)
	if created == nil || created.Status != metav1.ConditionTrue {
		if st.desired != model.PowerStateOn { // else the prerequisites say it
			st.note = "waiting for the VM to be created"
		}
		return observation{}, nil
	}
	obs, err := findVM(ctx, r.vc, instanceUUID, placed.UniqueID)
	switch {
	case errors.Is(err, errNoVM):
		st.note = err.Error()
		return observation{}, nil
	case err != nil:
		return observation{}, err
	}
	r.index.remember(obs.vm.Reference().Value, ref)
	return obs, nil
}

// apply runs the operation that plan asks for and observes the VM again. A task already
// running on the VM (ours before a crash, or another service's) is awaited first and the
// VM looked at again, so an operation is never issued twice. What vCenter refuses goes
// into the condition; failing to reach it is retried.
func (r *reconciler) apply(ctx context.Context, obs observation, st *syncState, g gate) (_ observation, ran bool, _ error) {
	op, why := plan(st.desired, obs.power, g)
	if op == nil {
		st.note = why
		return obs, false, nil
	}
	if err := vcenter.AwaitTasks(ctx, r.vc.Client, obs.vm.Reference()); err != nil {
		return obs, false, err
	}
	obs, err := r.observe(ctx, obs)
	if err != nil {
		return obs, false, err
	}
	if op, st.note = plan(st.desired, obs.power, g); op == nil {
		return obs, false, nil
	}
	task, err := op.start(ctx, obs.vm)
	if err == nil {
		_, err = vcenter.WaitTask(ctx, task)
	}
	switch {
	case err == nil, fault.Is(err, &types.InvalidPowerState{}):
		// Done, or the state changed under us: look again either way.
	case fault.Is(err, &types.TaskInProgress{}), !vcenter.IsFault(err):
		return obs, false, fmt.Errorf("%s VM %s: %w", op.kind, obs.vm.Reference().Value, err)
	default:
		st.note = fmt.Sprintf("%s failed: %v", op.kind, err)
		r.log.Warn("power operation failed", "vm", obs.vm.Reference().Value, "op", string(op.kind), "err", err)
		return obs, false, nil
	}
	obs, err = r.observe(ctx, obs)
	return obs, err == nil, err
}

// observe reads obs's VM again.
func (r *reconciler) observe(ctx context.Context, obs observation) (observation, error) {
	again, err := observe(ctx, r.vc, obs.vm)
	if err != nil {
		return obs, err
	}
	return again.observation, nil
}

// previous reads power's own last slice about this incarnation of the object.
func (r *reconciler) previous(ctx context.Context, o reconcile.Object) (previous, error) {
	rec, err := events.LastStatus(ctx, r.js, o.Ref, model.ServicePower)
	if errors.Is(err, events.ErrNotFound) {
		return previous{}, nil
	}
	if err != nil {
		return previous{}, fmt.Errorf("read power's status of %s: %w", o.Ref, err)
	}
	p := previous{seq: rec.Seq}
	if rec.Slice.UID != o.Meta.UID || len(rec.Slice.Status) == 0 {
		return p, nil
	}
	p.raw = rec.Slice.Status
	if err := json.Unmarshal(rec.Slice.Status, &p.status); err != nil {
		r.log.Warn("ignoring undecodable previous slice", "object", o.Ref.String(), "err", err)
		p.status, p.raw = powerStatus{}, nil
	}
	return p, nil
}
