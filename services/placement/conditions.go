package placement

import (
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/model"
)

// conditions collects the service's conditions for one slice. A condition keeps the
// lastTransitionTime of the previous slice while its status, reason and message are
// unchanged, so a repeated reconcile publishes byte-identical slices.
type conditions struct {
	prev map[string]metav1.Condition
	gen  int64
	now  metav1.Time
	set  map[string]metav1.Condition
}

func newConditions(prev []metav1.Condition, generation int64, now time.Time) *conditions {
	c := &conditions{prev: map[string]metav1.Condition{}, gen: generation,
		now: metav1.NewTime(now.UTC().Truncate(time.Second)), set: map[string]metav1.Condition{}}
	for _, p := range prev {
		c.prev[p.Type] = p
	}
	return c
}

// put sets a condition; reason "" means the status itself (api-rules §3).
func (c *conditions) put(typ string, status metav1.ConditionStatus, reason, message string) {
	if reason == "" {
		reason = string(status)
	}
	next := metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message,
		ObservedGeneration: c.gen, LastTransitionTime: c.now}
	if p, ok := c.prev[typ]; ok && p.Status == status && p.Reason == reason && p.Message == message {
		next.LastTransitionTime = p.LastTransitionTime
	}
	c.set[typ] = next
}

func (c *conditions) ok(typ string) { c.put(typ, metav1.ConditionTrue, model.ReasonTrue, "") }

func (c *conditions) fail(typ, reason, message string) {
	c.put(typ, metav1.ConditionFalse, reason, message)
}

// restart sets a condition whose lastTransitionTime must be now even when it repeats the
// previous one: it records when an operation started.
func (c *conditions) restart(typ string, status metav1.ConditionStatus, reason, message string) {
	c.set[typ] = metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message,
		ObservedGeneration: c.gen, LastTransitionTime: c.now}
}

// keep carries conditions over from the previous slice unchanged, unless set already.
func (c *conditions) keep(types ...string) {
	for _, typ := range types {
		if _, done := c.set[typ]; done {
			continue
		}
		if p, ok := c.prev[typ]; ok {
			c.set[typ] = p
		}
	}
}

// list is the conditions sorted by type (the merged status puts Ready first; placement
// never sets Ready).
func (c *conditions) list() []metav1.Condition {
	out := make([]metav1.Condition, 0, len(c.set))
	for _, cond := range c.set {
		out = append(out, cond)
	}
	slices.SortFunc(out, func(a, b metav1.Condition) int { return strings.Compare(a.Type, b.Type) })
	return out
}

// createAttempted reports whether prev shows that a create may have been issued for this
// incarnation: one started (Creating), failed (Error) or done (True). Before any, no VM of
// the object can exist.
func createAttempted(prev []metav1.Condition) bool {
	for _, p := range prev {
		if p.Type == model.ConditionCreated {
			return p.Status == metav1.ConditionTrue || p.Reason == model.ReasonCreating || p.Reason == model.ReasonError
		}
	}
	return false
}

// createdReported reports whether prev shows the VM created (Created True).
func createdReported(prev []metav1.Condition) bool {
	for _, p := range prev {
		if p.Type == model.ConditionCreated {
			return p.Status == metav1.ConditionTrue
		}
	}
	return false
}

// searchByName says whether findVM may look for the VM by name: once a create was
// attempted (or, deleting, always) and none is in flight.
func searchByName(prev []metav1.Condition, deleting bool, now time.Time, grace time.Duration) bool {
	_, inFlight := creating(prev, now, grace)
	return (deleting || createAttempted(prev)) && !inFlight
}

// creating reports whether prev records a create that started less than grace before now.
func creating(prev []metav1.Condition, now time.Time, grace time.Duration) (time.Time, bool) {
	for _, p := range prev {
		if p.Type == model.ConditionCreated && p.Status == metav1.ConditionFalse && p.Reason == model.ReasonCreating {
			started := p.LastTransitionTime.Time
			return started, now.Sub(started) < grace
		}
	}
	return time.Time{}, false
}
