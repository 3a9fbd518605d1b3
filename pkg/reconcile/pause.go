package reconcile

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// Who paused an object (api-rules §4): the values of the paused label.
const (
	pausedByDevOps = "devops"
	pausedByAdmin  = "admin"
	pausedByBoth   = "both"
)

// pausedBy says who paused the object: DevOps with the paused annotation, an admin with
// the paused label (which only privileged callers may set, ANN-5), both; "" for nobody.
// A label saying only "devops" pauses nothing by itself: it records the annotation.
func pausedBy(m Meta) string {
	_, devops := m.Annotations[model.AnnotationPaused]
	label := m.Labels[model.LabelPaused]
	admin := label == pausedByAdmin || label == pausedByBoth
	switch {
	case devops && admin:
		return pausedByBoth
	case admin:
		return pausedByAdmin
	case devops:
		return pausedByDevOps
	}
	return ""
}

// pausedMessage is the ReconcileReady message naming who paused the object.
func pausedMessage(by string) string {
	who := map[string]string{pausedByDevOps: "DevOps", pausedByAdmin: "Admin", pausedByBoth: "Admin and DevOps"}[by]
	return "Virtual Machine reconciliation paused by " + who
}

// paused answers a reconcile of a paused object in place of the service's Func, which
// must not act on it: the service's previous slice stands, and the service that reports
// pauses (Config.ReportsPause) republishes it with ReconcileReady False saying who
// paused, still labelled with the generation it reconciled. Once unpaused, the next
// reconcile (the annotation's removal is a spec change) acts on the latest spec.
func paused(cfg Config, o Object, by string) (Result, error) {
	if !cfg.ReportsPause {
		return Result{keep: true}, nil
	}
	prev := o.Slices[cfg.Service]
	status, err := withReconcileReady(prev.Status, lastReconcileReady(prev), o.Meta.Generation,
		metav1.ConditionFalse, model.ReasonReconcilePaused, pausedMessage(by))
	if err != nil {
		return Result{}, fmt.Errorf("%w: %s slice of %s: %v", events.ErrPermanent, cfg.Service, o.Ref, err)
	}
	return Result{Status: status, Released: prev.Released, generation: prev.Generation}, nil
}

// reportReady sets ReconcileReady True in the slice a reporting service's Func returned
// for an object that is not paused.
func reportReady(cfg Config, o Object, res Result) (Result, error) {
	if !cfg.ReportsPause || res.Released || res.published || res.keep {
		return res, nil
	}
	var raw json.RawMessage
	if res.Status != nil {
		var err error
		if raw, err = json.Marshal(res.Status); err != nil {
			return Result{}, fmt.Errorf("%w: encode status of %s: %v", events.ErrPermanent, o.Ref, err)
		}
	}
	status, err := withReconcileReady(raw, lastReconcileReady(o.Slices[cfg.Service]), o.Meta.Generation,
		metav1.ConditionTrue, "", "")
	if err != nil {
		return Result{}, fmt.Errorf("%w: %s slice of %s: %v", events.ErrPermanent, cfg.Service, o.Ref, err)
	}
	res.Status = status
	return res, nil
}

// lastReconcileReady is the ReconcileReady condition of the service's previous slice.
func lastReconcileReady(s events.Slice) *metav1.Condition {
	conds, err := SliceConditions(s)
	if err != nil {
		return nil // an undecodable slice keeps no transition time
	}
	return FindCondition(conds, model.ConditionReconcileReady)
}

// withReconcileReady returns the status object with its ReconcileReady condition set,
// keeping prev's transition time unless the condition changed.
func withReconcileReady(status json.RawMessage, prev *metav1.Condition, generation int64, st metav1.ConditionStatus, reason, message string) (json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if len(status) > 0 {
		if err := json.Unmarshal(status, &obj); err != nil {
			return nil, fmt.Errorf("decode status: %w", err)
		}
	}
	var conds []metav1.Condition
	if raw, ok := obj["conditions"]; ok {
		if err := json.Unmarshal(raw, &conds); err != nil {
			return nil, fmt.Errorf("decode conditions: %w", err)
		}
	}
	var before []metav1.Condition
	if prev != nil {
		before = []metav1.Condition{*prev}
	}
	set := NewConditionSet(before, generation, time.Now())
	set.list = slices.DeleteFunc(conds, func(c metav1.Condition) bool { return c.Type == model.ConditionReconcileReady })
	set.Set(model.ConditionReconcileReady, st, reason, message)
	raw, err := json.Marshal(set.List())
	if err != nil {
		return nil, err
	}
	obj["conditions"] = raw
	return json.Marshal(obj)
}
