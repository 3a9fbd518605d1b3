package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// pausedBy says who paused the object (model.PausedByDevOps, …Admin, …Both): DevOps with
// the paused annotation, an admin with the paused label (which the service reading
// vSphere's ExtraConfig keeps, Config.WhilePaused), both; "" for nobody. A label saying
// only "devops" pauses nothing by itself: it records the annotation.
func pausedBy(m Meta) string {
	_, devops := m.Annotations[model.AnnotationPaused]
	return model.PausedLabel(devops, model.PausedByAdminLabel(m.Labels[model.LabelPaused]))
}

// PausedMessage is the ReconcileReady message naming who paused the object (by: a value
// of the paused label).
func PausedMessage(by string) string {
	who := map[string]string{model.PausedByDevOps: "DevOps", model.PausedByAdmin: "Admin", model.PausedByBoth: "Admin, DevOps"}[by]
	return "Virtual Machine reconciliation paused by " + who
}

// paused answers a reconcile of a paused object in place of the service's Func, which
// must not act on it: the service's previous slice stands, and the service that reports
// pauses (Config.ReportsPause) republishes it with ReconcileReady False saying who
// paused, still labelled with the generation it reconciled. Once unpaused, the next
// reconcile (the annotation's removal is a spec change) acts on the latest spec. The
// service's Config.WhilePaused looks first.
func paused(ctx context.Context, cfg Config, o Object, by string) (Result, error) {
	if cfg.WhilePaused != nil {
		if err := cfg.WhilePaused(ctx, o); err != nil {
			return Result{}, err
		}
	}
	if !cfg.ReportsPause {
		return Result{Keep: true, answered: true}, nil
	}
	prev := o.Slices[cfg.Service]
	status, err := withPausedCondition(prev, o.Meta.Generation, PausedMessage(by))
	if err != nil {
		return Result{}, fmt.Errorf("%w: %s slice of %s: %v", events.ErrPermanent, cfg.Service, o.Ref, err)
	}
	return Result{Status: status, Record: prev.Record, Released: prev.Released, generation: prev.Generation, answered: true}, nil
}

// withPausedCondition returns the slice's status object with ReconcileReady False saying
// message, keeping its transition time if it said so already.
func withPausedCondition(prev events.Slice, generation int64, message string) (json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if len(prev.Status) > 0 {
		if err := json.Unmarshal(prev.Status, &obj); err != nil {
			return nil, fmt.Errorf("decode status: %w", err)
		}
	}
	conds, err := SliceConditions(prev)
	if err != nil {
		return nil, err
	}
	set := NewConditionSet(conds, generation, time.Now())
	set.list = slices.Clone(conds) // the other conditions stand; Set replaces ReconcileReady
	set.Set(model.ConditionReconcileReady, metav1.ConditionFalse, model.ReasonReconcilePaused, message)
	raw, err := json.Marshal(set.List())
	if err != nil {
		return nil, err
	}
	obj["conditions"] = raw
	return json.Marshal(obj)
}
