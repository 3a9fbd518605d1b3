package power

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// groupStatus is power's slice of a VirtualMachineGroup's .status (api-rules §9.3).
type groupStatus struct {
	Members []model.VirtualMachineGroupMemberStatus `json:"members,omitempty"`
	// LastUpdatedPowerStateTime is the last-updated annotation last applied, at its full
	// precision: a metav1.Time would cut it to seconds, and a second change within that
	// second would then look applied already.
	LastUpdatedPowerStateTime string             `json:"lastUpdatedPowerStateTime,omitempty"`
	Conditions                []metav1.Condition `json:"conditions,omitempty"`
}

const (
	retryWrite    = 2 * time.Second // when a group retries member writes that failed
	memberWriters = 8               // members of one group written at the same time
)

// groupReconciler gives groups' members the group's power state on the group's schedule
// and reports the members.
type groupReconciler struct {
	js        jetstream.JetStream
	index     memberIndex
	requestAt func(ctx context.Context, ref events.Ref, at time.Time)
	log       *slog.Logger
}

// reconcile applies a pending power state change to every member (each with its
// boot-order instant), powers joining members like the rest, and reports the members.
func (r *groupReconciler) reconcile(ctx context.Context, o reconcile.Object) (reconcile.Result, error) {
	var prev groupStatus
	if s, ok := o.Slices[model.ServicePower]; ok && len(s.Status) > 0 {
		if err := json.Unmarshal(s.Status, &prev); err != nil {
			r.log.Warn("ignoring undecodable previous group slice", "object", o.Ref.String(), "err", err)
			prev = groupStatus{}
		}
	}
	if o.Deleting() {
		return reconcile.Result{Status: prev, Released: true}, nil
	}
	var g model.VirtualMachineGroup
	if err := json.Unmarshal(o.Spec.Body, &g); err != nil {
		return reconcile.Result{}, fmt.Errorf("%w: decode %s: %v", events.ErrPermanent, o.Ref, err)
	}
	now := time.Now()
	conds := reconcile.NewConditionSet(prev.Conditions, o.Meta.Generation, now)
	st := groupStatus{LastUpdatedPowerStateTime: prev.LastUpdatedPowerStateTime}

	s, err := r.schedule(&g, prev.LastUpdatedPowerStateTime)
	if err != nil {
		// Admission keeps these annotations readable (VMG-2, PWR-9); a privileged writer
		// may not have: say so and leave the members alone.
		conds.Set(model.ConditionReady, metav1.ConditionFalse, model.ReasonInvalid, err.Error())
		st.Members, st.Conditions = prev.Members, conds.List()
		return reconcile.Result{Status: st}, nil
	}
	ms, err := r.index.members(ctx, o.Ref.Namespace, &g)
	if err != nil {
		return reconcile.Result{}, err
	}
	before := map[memberKey]*model.VirtualMachineGroupMemberStatus{}
	for i, m := range prev.Members {
		before[memberKey{Kind: m.Kind, Name: m.Name}] = &prev.Members[i]
	}
	// Members are written at once, not one after the other: a power-off is immediate for
	// all of them, and a step's members start together.
	st.Members = make([]model.VirtualMachineGroupMemberStatus, len(ms))
	oks, errs := make([]bool, len(ms)), make([]error, len(ms))
	var wg sync.WaitGroup
	slots := make(chan struct{}, memberWriters)
	for i, m := range ms {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			st.Members[i], oks[i], errs[i] = r.member(ctx, &g, m, s, before[m.key], now)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return reconcile.Result{}, err
	}
	if slices.Contains(oks, false) {
		r.requestAt(ctx, o.Ref, now.Add(retryWrite))
	} else if s.due {
		st.LastUpdatedPowerStateTime = s.stamp // every member has it: done
	}
	conds.Set(readyCondition(st.Members))
	if typ, status, reason, msg, ok := placementCondition(st.Members); ok {
		conds.Set(typ, status, reason, msg)
	}
	st.Conditions = conds.List()
	return reconcile.Result{Status: st}, nil
}

// groupSchedule is the group's power state change and its instants.
type groupSchedule struct {
	due   bool   // the power state was set after it was last applied
	stamp string // the last-updated annotation it answers
	base  time.Time
	at    map[memberKey]time.Time
}

func (r *groupReconciler) schedule(g *model.VirtualMachineGroup, applied string) (groupSchedule, error) {
	var s groupSchedule
	if g.Spec.PowerState == "" {
		return s, nil
	}
	var err error
	if s.due, s.stamp, err = changeDue(g, applied); err != nil {
		return s, err
	}
	if s.base, err = scheduleBase(g); err != nil {
		return s, err
	}
	s.at = instants(g, s.base)
	return s, nil
}

// instant is when m gets the power state: its boot-order instant, or the base for a
// member the boot order does not list.
func (s groupSchedule) instant(m member) time.Time {
	if at, ok := s.at[m.key]; ok {
		return at
	}
	return s.base
}

// member writes what the group gives m and reports it; ok is false when a write failed.
func (r *groupReconciler) member(ctx context.Context, g *model.VirtualMachineGroup, m member, s groupSchedule, prev *model.VirtualMachineGroupMemberStatus, now time.Time) (ms model.VirtualMachineGroupMemberStatus, ok bool, _ error) {
	ms = model.VirtualMachineGroupMemberStatus{Name: m.key.Name, Kind: m.key.Kind}
	var prevConds []metav1.Condition
	if prev != nil {
		prevConds = prev.Conditions
	}
	conds := reconcile.NewConditionSet(prevConds, g.Generation, now)
	defer func() { ms.Conditions = conds.List() }()

	if m.bad != nil {
		conds.Set(model.ConditionGroupLinked, metav1.ConditionFalse, model.ReasonError, m.bad.Error())
		return ms, true, nil
	}
	if !m.found {
		conds.Set(model.ConditionGroupLinked, metav1.ConditionFalse, model.ReasonNotFound, m.key.String()+" does not exist")
		return ms, true, nil
	}
	ms.UID = types.UID(m.head.Metadata.UID)
	if m.head.Spec.GroupName != g.Name {
		conds.Set(model.ConditionGroupLinked, metav1.ConditionFalse, model.ReasonNotMember, notMemberMessage(m.head.Spec.GroupName))
		return ms, true, nil
	}

	// A member joining (new, re-created, or newly naming the group) takes the group's
	// power state like the others: "state inheritance" of the seed.
	joined := prev == nil || prev.UID != ms.UID || !reconcile.IsTrue(prev.Conditions, model.ConditionGroupLinked)
	var change *powerChange
	if g.Spec.PowerState != "" && (s.due || joined) {
		change = &powerChange{state: g.Spec.PowerState, offMode: g.Spec.PowerOffMode, suspendMode: g.Spec.SuspendMode, at: formatInstant(s.instant(m))}
	}
	owner := metav1.OwnerReference{APIVersion: model.GroupVMOperator + "/" + model.VersionVMOperator, Kind: "VirtualMachineGroup", Name: g.Name, UID: g.UID}
	m, err := m.write(ctx, r.js, g.Name, owner, change, now)
	switch {
	case errors.Is(err, errLeft):
		conds.Set(model.ConditionGroupLinked, metav1.ConditionFalse, model.ReasonNotMember, notMemberMessage(m.head.Spec.GroupName))
		return ms, true, nil
	case errors.Is(err, events.ErrPermanent):
		conds.Set(model.ConditionGroupLinked, metav1.ConditionFalse, model.ReasonError, err.Error())
		return ms, true, nil
	case err != nil:
		r.log.Warn("write group member", "group", g.Name, "member", m.key.String(), "err", err)
		conds.Set(model.ConditionGroupLinked, metav1.ConditionFalse, model.ReasonOwnerRefPatchError, err.Error())
		if change != nil {
			conds.Set(model.ConditionMemberPowerStateSynced, metav1.ConditionFalse, model.ReasonPowerStatePatchError, err.Error())
		}
		return ms, false, nil
	}
	conds.Set(model.ConditionGroupLinked, metav1.ConditionTrue, model.ReasonTrue, "")
	if m.key.Kind == model.GroupMemberKindVirtualMachine {
		if err := r.vmPlacement(ctx, m, &ms, conds); err != nil {
			return ms, true, err
		}
	}
	if g.Spec.PowerState == "" {
		return ms, true, nil
	}
	if m.key.Kind == model.GroupMemberKindVirtualMachine {
		err = r.vmSynced(ctx, g.Spec.PowerState, m, &ms, conds, now)
	} else {
		err = r.groupSynced(ctx, g.Spec.PowerState, m, conds)
	}
	return ms, true, err
}

func notMemberMessage(group string) string {
	if group == "" {
		return "the member names no group"
	}
	return fmt.Sprintf("the member names group %q", group)
}

// vmSynced sets PowerStateSynced of a VM member from what power observes of it.
func (r *groupReconciler) vmSynced(ctx context.Context, desired model.PowerState, m member, ms *model.VirtualMachineGroupMemberStatus, conds *reconcile.ConditionSet, now time.Time) error {
	var observed powerStatus
	if err := r.lastSlice(ctx, m, &observed); err != nil {
		return err
	}
	if observed.PowerState != "" {
		ms.PowerState = &observed.PowerState
	}
	switch {
	case observed.PowerState == desired:
		conds.Set(model.ConditionMemberPowerStateSynced, metav1.ConditionTrue, model.ReasonTrue, "")
	case m.head.Spec.PowerState != desired:
		conds.Set(model.ConditionMemberPowerStateSynced, metav1.ConditionFalse, model.ReasonNotSynced,
			fmt.Sprintf("the VM's spec.powerState is %q, the group's %q", m.head.Spec.PowerState, desired))
	default:
		msg := fmt.Sprintf("waiting for the VM to be %s", desired)
		v := m.head.Metadata.Annotations[model.AnnotationApplyPowerStateTime]
		if at, err := time.Parse(time.RFC3339Nano, v); err == nil && at.After(now) {
			msg = fmt.Sprintf("%s at %s", desired, v)
		}
		conds.Set(model.ConditionMemberPowerStateSynced, metav1.ConditionFalse, model.ReasonPending, msg)
	}
	return nil
}

// groupSynced sets PowerStateSynced of a group member, and mirrors its Ready: the nested
// group reports its own members.
func (r *groupReconciler) groupSynced(ctx context.Context, desired model.PowerState, m member, conds *reconcile.ConditionSet) error {
	var child groupStatus
	if err := r.lastSlice(ctx, m, &child); err != nil {
		return err
	}
	ready := reconcile.FindCondition(child.Conditions, model.ConditionReady)
	if ready == nil {
		ready = &metav1.Condition{Status: metav1.ConditionUnknown, Reason: model.ReasonPending, Message: "not reported yet"}
	}
	conds.Set(model.ConditionReady, ready.Status, ready.Reason, ready.Message)
	switch {
	case m.head.Spec.PowerState != desired:
		conds.Set(model.ConditionMemberPowerStateSynced, metav1.ConditionFalse, model.ReasonNotSynced,
			fmt.Sprintf("the group's spec.powerState is %q, this group's %q", m.head.Spec.PowerState, desired))
	case ready.Status == metav1.ConditionTrue:
		conds.Set(model.ConditionMemberPowerStateSynced, metav1.ConditionTrue, model.ReasonTrue, "")
	default:
		conds.Set(model.ConditionMemberPowerStateSynced, metav1.ConditionFalse, model.ReasonPending, "waiting for the group's members")
	}
	return nil
}

// lastSlice decodes power's newest slice about m into v; none (or one about an older
// incarnation) leaves v alone.
func (r *groupReconciler) lastSlice(ctx context.Context, m member, v any) error {
	rec, err := events.LastStatus(ctx, r.js, m.ref, model.ServicePower)
	if errors.Is(err, events.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read power's status of %s: %w", m.ref, err)
	}
	if rec.Slice.UID != m.head.Metadata.UID || len(rec.Slice.Status) == 0 {
		return nil
	}
	if err := json.Unmarshal(rec.Slice.Status, v); err != nil {
		r.log.Warn("ignoring undecodable member slice", "member", m.ref.String(), "err", err)
	}
	return nil
}
