package power

import (
	"fmt"
	"time"

	"github.com/vmop/vmop/pkg/model"
)

// memberKey names a group member; Kind is never empty.
type memberKey struct{ Kind, Name string }

func (k memberKey) String() string { return k.Kind + "/" + k.Name }

func keyOf(m model.GroupMember) memberKey {
	kind := m.Kind
	if kind == "" {
		kind = model.GroupMemberKindVirtualMachine // the schema default
	}
	return memberKey{Kind: kind, Name: m.Name}
}

// changeDue reports that the group's power state was set (or a sync forced) after it
// was last applied to the members: the last-updated annotation is newer than
// status.lastUpdatedPowerStateTime (api-rules §9.3). stamp is the annotation's value,
// which becomes the status once applied.
func changeDue(g *model.VirtualMachineGroup, applied string) (due bool, stamp string, err error) {
	stamp = g.Annotations[model.AnnotationLastUpdatedPowerStateTime]
	if g.Spec.PowerState == "" || stamp == "" {
		return false, stamp, nil
	}
	updated, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil {
		return false, stamp, fmt.Errorf("annotation %s: %w", model.AnnotationLastUpdatedPowerStateTime, err)
	}
	if applied == "" {
		return true, stamp, nil
	}
	last, err := time.Parse(time.RFC3339Nano, applied)
	if err != nil {
		return true, stamp, nil // an unreadable record of the last apply: apply again
	}
	return updated.After(last), stamp, nil
}

// BootLead is how long after a power-on is asked for a group's boot order starts. The
// members of every step are written at once, and a member powers on only once its other
// services have confirmed the new spec; the lead gives the first step that moment, so
// that every step starts on its instant and the steps are exactly their delays apart.
const BootLead = time.Second

// scheduleBase is the instant the group's boot order counts from: the apply time its
// parent group gave it, else when its power state was last set (plus BootLead for a
// boot order with delays). Both are persisted in the group, so a restarted service
// computes the same instants.
func scheduleBase(g *model.VirtualMachineGroup) (time.Time, error) {
	key := model.AnnotationApplyPowerStateTime
	v := g.Annotations[key]
	if v == "" {
		key = model.AnnotationLastUpdatedPowerStateTime
		v = g.Annotations[key]
	}
	if v == "" {
		return time.Time{}, fmt.Errorf("annotation %s is not set", model.AnnotationLastUpdatedPowerStateTime)
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("annotation %s: %w", key, err)
	}
	if key == model.AnnotationLastUpdatedPowerStateTime && g.Spec.PowerState == model.PowerStateOn && hasDelays(g) {
		t = t.Add(BootLead)
	}
	return t, nil
}

// hasDelays tells whether g's boot order spaces its steps at all.
func hasDelays(g *model.VirtualMachineGroup) bool {
	for _, step := range g.Spec.BootOrder {
		if step.PowerOnDelay != nil && step.PowerOnDelay.Duration > 0 {
			return true
		}
	}
	return false
}

// instants says when each boot-order member gets the group's power state: for a power-on,
// entry k at base plus the powerOnDelay of every entry before it; power-off and suspend
// at base for all (api-rules §9.3). A member listed twice (VMG-4 forbids it) keeps its
// first instant.
func instants(g *model.VirtualMachineGroup, base time.Time) map[memberKey]time.Time {
	at := map[memberKey]time.Time{}
	next := base
	for _, step := range g.Spec.BootOrder {
		for _, m := range step.Members {
			if _, seen := at[keyOf(m)]; !seen {
				at[keyOf(m)] = next
			}
		}
		if g.Spec.PowerState == model.PowerStateOn && step.PowerOnDelay != nil && step.PowerOnDelay.Duration > 0 {
			next = next.Add(step.PowerOnDelay.Duration)
		}
	}
	return at
}

// formatInstant is the annotation value of an instant; always UTC, so that one instant
// has one spelling and an unchanged schedule rewrites nothing.
func formatInstant(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
