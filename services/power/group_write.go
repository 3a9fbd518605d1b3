package power

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// powerChange is what a group gives a member: its power state and modes, and the instant
// before which the member must not act on them.
type powerChange struct {
	state                model.PowerState
	offMode, suspendMode model.PowerOpMode // "" leaves the member's own mode
	at                   string            // apply-power-state-time, formatInstant
}

// writeAttempts bounds the read-modify-append rounds lost to concurrent writers (the
// gateway, placement's zone label); the reconcile's retry takes over after that.
const writeAttempts = 4

// errLeft: the member stopped naming the group while the group was writing it.
var errLeft = errors.New("no longer names the group")

// stale says whether m lacks the owner reference or, with c, the change.
func (m member) stale(owner metav1.OwnerReference, c *powerChange) bool {
	if !hasOwner(m.head.Metadata.OwnerReferences, owner.UID) {
		return true
	}
	if c == nil {
		return false
	}
	s := m.head.Spec
	return s.PowerState != c.state ||
		(c.offMode != "" && s.PowerOffMode != c.offMode) ||
		(c.suspendMode != "" && s.SuspendMode != c.suspendMode) ||
		m.head.Metadata.Annotations[model.AnnotationApplyPowerStateTime] != c.at
}

func hasOwner(refs []metav1.OwnerReference, uid types.UID) bool {
	for _, r := range refs {
		if r.UID == uid {
			return true
		}
	}
	return false
}

// write gives m the owner reference and, with c, the change, appending its record with
// compare-and-swap on the record read (as placement writes the zone label); a lost race
// reads the member again and retries. It returns the member as stored.
func (m member) write(ctx context.Context, js jetstream.JetStream, group string, owner metav1.OwnerReference, c *powerChange, now time.Time) (member, error) {
	if m.rec.Body == nil && m.found && m.head.Spec.GroupName == group && m.stale(owner, c) {
		// Known from the index, which keeps no bodies: the record to edit is read first.
		var err error
		if m, err = m.reread(ctx, js); err != nil {
			return m, err
		}
	}
	for attempt := 1; ; attempt++ {
		if !m.found || m.head.Spec.GroupName != group {
			return m, fmt.Errorf("%s %w", m.key, errLeft)
		}
		if !m.stale(owner, c) {
			return m, nil
		}
		body, err := withPowerChange(m.rec.Body, m.key.Kind, owner, c, now)
		if err != nil {
			return m, fmt.Errorf("%w: edit member %s: %v", events.ErrPermanent, m.key, err)
		}
		_, err = events.AppendSpec(ctx, js, m.ref, events.OpPut, body, m.rec.Seq, nil)
		if err == nil || !errors.Is(err, events.ErrConflict) || attempt == writeAttempts {
			if err != nil {
				return m, fmt.Errorf("write member %s: %w", m.key, err)
			}
			return m.reread(ctx, js)
		}
		if m, err = m.reread(ctx, js); err != nil {
			return m, err
		}
	}
}

// reread is m as its latest record says, still listed or not.
func (m member) reread(ctx context.Context, js jetstream.JetStream) (member, error) {
	fresh, err := readMember(ctx, js, m.key, m.ref)
	fresh.listed = m.listed
	return fresh, err
}

// withPowerChange edits a member's stored body: the owner reference added, and with c the
// power state, modes and apply time set (a member group also gets the last-updated stamp
// that makes it apply them), generation counting the spec change as the gateway does.
// Everything else is kept as stored.
func withPowerChange(body []byte, kind string, owner metav1.OwnerReference, c *powerChange, now time.Time) ([]byte, error) {
	obj, err := model.DecodeObject(body)
	if err != nil {
		return nil, err
	}
	meta := model.Child(obj, "metadata")
	var refs []metav1.OwnerReference
	if raw, err := json.Marshal(meta["ownerReferences"]); err == nil && meta["ownerReferences"] != nil {
		if err := json.Unmarshal(raw, &refs); err != nil {
			return nil, fmt.Errorf("metadata.ownerReferences: %w", err)
		}
	}
	if !hasOwner(refs, owner.UID) {
		refs = append(refs, owner)
		meta["ownerReferences"] = refs
	}
	if c == nil {
		return json.Marshal(obj)
	}

	spec := model.Child(obj, "spec")
	changed := spec["powerState"] != string(c.state)
	spec["powerState"] = string(c.state)
	for field, mode := range map[string]model.PowerOpMode{"powerOffMode": c.offMode, "suspendMode": c.suspendMode} {
		if mode != "" {
			changed = changed || spec[field] != string(mode)
			spec[field] = string(mode)
		}
	}
	annotations := model.Child(meta, "annotations")
	annotations[model.AnnotationApplyPowerStateTime] = c.at
	if kind == model.GroupMemberKindVirtualMachineGroup {
		annotations[model.AnnotationLastUpdatedPowerStateTime] = formatInstant(now)
	}
	if changed {
		model.CountSpecChange(meta)
	}
	return json.Marshal(obj)
}
