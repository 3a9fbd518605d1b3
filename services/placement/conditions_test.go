package placement

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/model"
)

// A condition keeps its lastTransitionTime while status, reason and message are unchanged;
// restart always takes the current time; the list is sorted by type.
func TestConditionsTransitionTimes(t *testing.T) {
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	prev := []metav1.Condition{
		{Type: model.ConditionClassReady, Status: metav1.ConditionTrue, Reason: "True", LastTransitionTime: then, ObservedGeneration: 1},
		{Type: model.ConditionImageReady, Status: metav1.ConditionFalse, Reason: "NotFound", Message: "gone", LastTransitionTime: then},
		{Type: model.ConditionCreated, Status: metav1.ConditionFalse, Reason: model.ReasonCreating, Message: "creating", LastTransitionTime: then},
	}
	c := newConditions(prev, 2, now)
	c.ok(model.ConditionClassReady)
	c.fail(model.ConditionImageReady, model.ReasonNotFound, "still gone")
	c.restart(model.ConditionCreated, metav1.ConditionFalse, model.ReasonCreating, "creating")
	c.put(model.ConditionPlacementReady, metav1.ConditionFalse, "", "no room")

	at := metav1.NewTime(now.Truncate(time.Second))
	want := []metav1.Condition{
		{Type: model.ConditionClassReady, Status: metav1.ConditionTrue, Reason: "True", ObservedGeneration: 2, LastTransitionTime: then},
		{Type: model.ConditionPlacementReady, Status: metav1.ConditionFalse, Reason: "False", Message: "no room", ObservedGeneration: 2, LastTransitionTime: at},
		{Type: model.ConditionCreated, Status: metav1.ConditionFalse, Reason: model.ReasonCreating, Message: "creating", ObservedGeneration: 2, LastTransitionTime: at},
		{Type: model.ConditionImageReady, Status: metav1.ConditionFalse, Reason: "NotFound", Message: "still gone", ObservedGeneration: 2, LastTransitionTime: at},
	}
	if d := cmp.Diff(want, c.list()); d != "" {
		t.Errorf("conditions (-want +got):\n%s", d)
	}
	if started, inFlight := creating(prev, then.Add(createGrace-time.Second), createGrace); !inFlight || !started.Equal(then.Time) {
		t.Errorf("creating within the grace = %v, %v; want in flight since %v", started, inFlight, then)
	}
	if _, inFlight := creating(prev, then.Add(createGrace), createGrace); inFlight {
		t.Error("creating after the grace is still in flight")
	}
}
