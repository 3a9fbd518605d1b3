package power

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// powerStatus is power's slice of a VirtualMachine's .status (DESIGN §4, api-rules §3).
type powerStatus struct {
	PowerState model.PowerState                    `json:"powerState,omitempty"`
	Hardware   *model.VirtualMachineHardwareStatus `json:"hardware,omitempty"` // cpu, memory, vGPUs
	// HardwareVersion is the VM's, which power upgrades (upgrade.go).
	HardwareVersion int32                            `json:"hardwareVersion,omitempty"`
	Guest           *model.VirtualMachineGuestStatus `json:"guest,omitempty"`
	// LastRestartTime is the restart recorded in the VM (vcenter.KeyLastRestart).
	LastRestartTime *metav1.Time       `json:"lastRestartTime,omitempty"`
	Conditions      []metav1.Condition `json:"conditions,omitempty"`
}

// reconciler drives VMs' power; its reconciles and the vCenter watch share the index.
type reconciler struct {
	js    jetstream.JetStream
	vc    *govmomi.Client
	index *vmIndex
	log   *slog.Logger
	modes modeConfig
	// wake asks for a reconcile of ref at a time: a deadline recorded in the VM, the
	// instant its group gave it.
	wake func(ref events.Ref, at time.Time)
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
	prev := r.previous(o)
	if o.Deleting() {
		// Placement powers the VM off and destroys it; power holds nothing back but an
		// admin's pause, which the deletion waits for (admin_pause.go).
		admin, err := r.adminPause(ctx, o)
		if err != nil {
			return reconcile.Result{}, err
		}
		if wrote, err := r.keepPausedLabel(ctx, o, admin); err != nil || wrote {
			return reconcile.Result{Keep: true}, err
		}
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
	waits, err := r.withoutCryptoUnlessAsked(ctx, &vm, unmetPrerequisites(o, in, vm.Spec.Network != nil && vm.Spec.Network.Disabled))
	if err != nil {
		return reconcile.Result{}, err
	}
	g := gate{checks: pendingChecks(o.Meta.Annotations), waits: withVolumes(o, in, &vm, waits)}
	if st.desired == model.PowerStateOn {
		st.checks, st.waits = g.checks, g.waits
	}
	d := r.desire(o, vm, st.desired, g)

	obs, err := r.locate(ctx, o.Ref, vm.Spec.InstanceUUID, in[model.ServicePlacement], &st)
	if err != nil {
		return reconcile.Result{}, err
	}
	if wrote, err := r.keepPausedLabel(ctx, o, adminOf(o, obs)); err != nil || wrote {
		return reconcile.Result{Keep: true}, err // an admin's pause or its end: the new record comes next
	}
	n := notifier{js: r.js, ref: o.Ref, uid: o.Meta.UID}
	softDone := obs.softReached(d.generation) // a guest operation vmop asked for completed
	if obs.power != "" && prev.status.PowerState != "" && obs.power != prev.status.PowerState && !softDone {
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
	d.gate = g
	before, ran := obs.power, false
	if obs.vm != nil && !r.holdForGroup(o, &st) {
		if obs, ran, err = r.apply(ctx, o.Ref, obs, &st, d); err != nil {
			return reconcile.Result{}, err
		}
	}
	st.observed = obs.power
	status := r.status(o, prev, obs, st)
	status.Conditions = rc.conditions(status.Conditions, prev.status.Conditions, o.Meta.Generation) // resize_reconfigure.go
	err = n.notify(ctx, step{fromSeq: prev.seq, from: prev.status, previous: before, to: status, st: st, uniqueID: obs.uniqueID(), byVMOP: ran || softDone})
	if err != nil {
		return reconcile.Result{}, err
	}
	// Until placement reports the VM created, every input comes as a message.
	idle := !reconcile.IsTrue(in[model.ServicePlacement].Conditions, model.ConditionCreated)
	return reconcile.Result{Status: status, Idle: idle}, nil
}

// status is power's slice for what obs shows and st says.
func (r *reconciler) status(o reconcile.Object, prev previous, obs observation, st syncState) powerStatus {
	conds := reconcile.NewConditionSet(prev.status.Conditions, o.Meta.Generation, time.Now())
	c := st.condition()
	conds.Set(c.Type, c.Status, c.Reason, c.Message)
	s := powerStatus{PowerState: obs.power, Hardware: obs.hardware, HardwareVersion: obs.hw.version, Guest: obs.guest, Conditions: conds.List()}
	if t := obs.modes.lastRestart; !t.IsZero() {
		s.LastRestartTime = &metav1.Time{Time: t}
	}
	return s
}

// record publishes the slice and the events of a change vmop did not make, so that the
// correction that follows is a step of its own. It returns the new previous slice.
func (r *reconciler) record(ctx context.Context, o reconcile.Object, n notifier, prev previous, obs observation, st syncState) (previous, error) {
	st.observed = obs.power
	seen := r.status(o, prev, obs, st)
	// The slice replaces the previous one whole: the conditions this step does not speak
	// about (class, guest ID) stay as they were, for the reconcile that reads it next.
	for _, c := range prev.status.Conditions {
		if reconcile.FindCondition(seen.Conditions, c.Type) == nil {
			seen.Conditions = append(seen.Conditions, c)
		}
	}
	slices.SortFunc(seen.Conditions, func(a, b metav1.Condition) int { return strings.Compare(a.Type, b.Type) })
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

// apply runs the operation that plan asks for and observes the VM again. obs was read
// after the VM's unfinished tasks (ours before a crash, or another service's), so an
// operation is never issued twice. What vCenter refuses goes into the condition; failing
// to reach it is retried. A deadline or retry time plan names is armed with r.wake.
func (r *reconciler) apply(ctx context.Context, ref events.Ref, obs observation, st *syncState, d desire) (_ observation, ran bool, _ error) {
	modes, err := r.checkRestart(ctx, obs.vm, obs.modes)
	if err != nil {
		return obs, false, err
	}
	obs.modes = modes
	dec := plan(d, obs.modes, time.Now())
	if dec.op == nil {
		r.settle(ref, dec, st)
		return obs, false, nil
	}
	done, err := run(ctx, obs.vm, dec.op, obs.modes)
	if done {
		r.clearRecords(ctx, obs.vm, dec.op.cleared(obs.modes), "the "+string(dec.op.kind)+" that ran")
	}
	switch {
	case errors.Is(err, errRefused):
		st.note = strings.TrimPrefix(err.Error(), errRefused.Error()+": ")
		if !dec.op.restart.IsZero() {
			// A restart of a VM in its desired state: the condition says it did not happen.
			st.note, st.restartNote = "", st.note
		}
		r.log.Warn("power operation refused", "vm", obs.vm.Reference().Value, "op", string(dec.op.kind), "err", err)
		return obs, false, nil
	case err != nil:
		return obs, false, fmt.Errorf("%s VM %s: %w", dec.op.kind, obs.vm.Reference().Value, err)
	}
	if obs, err = r.observe(ctx, obs); err != nil {
		return obs, false, err
	}
	// A guest operation leaves the VM where it was for a while: say what is awaited.
	after := plan(d, obs.modes, time.Now())
	if after.op != nil {
		after.wake = time.Now().Add(time.Second) // the operation left the VM as it was: look again
	}
	r.settle(ref, after, st)
	return obs, true, nil
}

// settle puts what dec says into st and arms its wake-up.
func (r *reconciler) settle(ref events.Ref, dec decision, st *syncState) {
	st.note, st.restartNote = dec.why, dec.restartWhy
	if !dec.wake.IsZero() && r.wake != nil {
		r.wake(ref, dec.wake)
	}
}

// observe reads obs's VM again.
func (r *reconciler) observe(ctx context.Context, obs observation) (observation, error) {
	again, err := observe(ctx, r.vc, obs.vm)
	if err != nil {
		return obs, err
	}
	return again, nil
}

// previous is power's own last slice about this incarnation of the object, as the loop
// read it (no second read: the loop's is the one the slice is fenced by).
func (r *reconciler) previous(o reconcile.Object) previous {
	p := previous{seq: o.SliceSeq()}
	s, ok := o.Slices[model.ServicePower] // the loop read it, about this uid only
	if !ok || len(s.Status) == 0 {
		return p
	}
	p.raw = s.Status
	if err := json.Unmarshal(s.Status, &p.status); err != nil {
		r.log.Warn("ignoring undecodable previous slice", "object", o.Ref.String(), "err", err)
		p.status, p.raw = powerStatus{}, nil
	}
	return p
}
