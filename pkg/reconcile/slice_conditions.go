package reconcile

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
)

// SliceConditions returns the conditions a status slice carries (none when it has no
// status or no conditions): what a service reads of another service's slice to decide
// whether to act, and of its own previous slice to keep transition times.
func SliceConditions(s events.Slice) ([]metav1.Condition, error) {
	if len(s.Status) == 0 {
		return nil, nil
	}
	var st struct {
		Conditions []metav1.Condition `json:"conditions"`
	}
	if err := json.Unmarshal(s.Status, &st); err != nil {
		return nil, fmt.Errorf("decode conditions of the %s slice: %w", s.Service, err)
	}
	return st.Conditions, nil
}

// FindCondition returns the condition of type typ, or nil.
func FindCondition(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

// IsTrue tells whether the condition of type typ is present and True.
func IsTrue(conds []metav1.Condition, typ string) bool {
	c := FindCondition(conds, typ)
	return c != nil && c.Status == metav1.ConditionTrue
}

// ConditionSet builds the conditions of a service's next slice. A condition keeps the
// lastTransitionTime it had in the service's previous slice unless its status, reason or
// message changed (api-rules §3), so an unchanged reconcile publishes a byte-equal slice.
type ConditionSet struct {
	prev       []metav1.Condition
	generation int64
	now        time.Time
	list       []metav1.Condition
}

// NewConditionSet starts the conditions of a slice about generation; prev are the
// service's conditions in its previous slice.
func NewConditionSet(prev []metav1.Condition, generation int64, now time.Time) *ConditionSet {
	return &ConditionSet{prev: prev, generation: generation, now: now.UTC().Truncate(time.Second)}
}

// Set sets the condition typ; an empty reason becomes the status itself ("True",
// "False" or "Unknown"), as api-rules §3 asks of conditions without a specific reason.
func (s *ConditionSet) Set(typ string, status metav1.ConditionStatus, reason, message string) {
	if reason == "" {
		reason = string(status)
	}
	c := metav1.Condition{
		Type: typ, Status: status, ObservedGeneration: s.generation,
		Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(s.now),
	}
	if p := FindCondition(s.prev, typ); p != nil && p.Status == status && p.Reason == reason && p.Message == message {
		c.LastTransitionTime = p.LastTransitionTime
	}
	s.list = slices.DeleteFunc(s.list, func(x metav1.Condition) bool { return x.Type == typ })
	s.list = append(s.list, c)
}

// List returns the conditions set, sorted by type (the gateway merges and orders the
// conditions of all slices).
func (s *ConditionSet) List() []metav1.Condition {
	out := slices.Clone(s.list)
	slices.SortFunc(out, func(a, b metav1.Condition) int { return strings.Compare(a.Type, b.Type) })
	return out
}
