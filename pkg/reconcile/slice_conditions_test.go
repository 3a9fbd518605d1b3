package reconcile_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/reconcile"
)

// A condition keeps its previous transition time unless status, reason or message
// changed; a missing reason becomes the status.
func TestConditionSet(t *testing.T) {
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := time.Date(2026, 2, 1, 12, 0, 0, 500, time.UTC)
	prev := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "True", ObservedGeneration: 1, LastTransitionTime: then}}
	tests := []struct {
		name            string
		status          metav1.ConditionStatus
		reason, message string
		want            metav1.Condition
	}{
		{"unchanged", metav1.ConditionTrue, "", "", metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "True", ObservedGeneration: 2, LastTransitionTime: then}},
		{"new status", metav1.ConditionFalse, "", "broken", metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "False", Message: "broken", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(now.Truncate(time.Second))}},
		{"new reason", metav1.ConditionTrue, "Synced", "", metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Synced", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(now.Truncate(time.Second))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := reconcile.NewConditionSet(prev, 2, now)
			s.Set("Ready", tt.status, tt.reason, tt.message)
			if diff := cmp.Diff([]metav1.Condition{tt.want}, s.List()); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSliceConditions(t *testing.T) {
	status, _ := json.Marshal(map[string]any{"conditions": []metav1.Condition{{Type: "VirtualMachineCreated", Status: metav1.ConditionTrue}}})
	conds, err := reconcile.SliceConditions(events.Slice{Service: "placement", Status: status})
	if err != nil {
		t.Fatal(err)
	}
	if !reconcile.IsTrue(conds, "VirtualMachineCreated") || reconcile.IsTrue(conds, "Other") {
		t.Errorf("IsTrue over %+v: Created should be true, Other not", conds)
	}
	if conds, err := reconcile.SliceConditions(events.Slice{}); err != nil || conds != nil {
		t.Errorf("a slice without status: %v, %v; want none", conds, err)
	}
	if _, err := reconcile.SliceConditions(events.Slice{Status: []byte(`[1]`)}); err == nil {
		t.Error("a status that is not an object decoded")
	}
}
