package storage

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// claimEventTypes are the CloudEvents the claim loop publishes, which storage's NATS
// identity may publish.
var claimEventTypes = []string{
	events.TypeClaimBound, events.TypeClaimProvisioningFailed, events.TypeClaimResized,
	events.TypeClaimResizeFailed, events.TypeClaimLost, events.TypeClaimInUse, events.TypeClaimWaiting,
}

func claimEventKinds() []events.EventKind {
	out := make([]events.EventKind, len(claimEventTypes))
	for i, typ := range claimEventTypes {
		out[i] = events.EventKind{Plural: pluralClaims, Type: typ}
	}
	return out
}

// claimEvent is an event's data, worded as a Kubernetes component words its Events.
type claimEvent struct {
	Reason    string `json:"reason"`
	Message   string `json:"message"`
	Type      string `json:"type"` // Normal or Warning
	Component string `json:"component"`
}

type announcement struct {
	typ  string
	data claimEvent
}

// claimChanges are the events of a claim's status going from prev to now: bound, grown,
// lost, and each condition that appeared or says something new.
func claimChanges(prev, now model.PersistentVolumeClaimStatus, volumeName string) []announcement {
	normal := func(typ, reason, msg string) announcement {
		return announcement{typ, claimEvent{reason, msg, "Normal", "vmop-storage"}}
	}
	warning := func(typ, reason, msg string) announcement {
		return announcement{typ, claimEvent{reason, msg, "Warning", "vmop-storage"}}
	}
	var out []announcement
	was, is := prev.Capacity[model.StorageRequest], now.Capacity[model.StorageRequest]
	switch {
	case now.Phase == model.ClaimBound && prev.Phase != model.ClaimBound:
		out = append(out, normal(events.TypeClaimBound, "ProvisioningSucceeded",
			fmt.Sprintf("Bound to CNS volume %s of %s", volumeName, is.String())))
	case now.Phase == model.ClaimBound && is.Cmp(was) > 0:
		out = append(out, normal(events.TypeClaimResized, "VolumeResizeSuccessful",
			fmt.Sprintf("CNS volume %s grew from %s to %s", volumeName, was.String(), is.String())))
	case now.Phase == model.ClaimLost && prev.Phase != model.ClaimLost:
		out = append(out, warning(events.TypeClaimLost, "ClaimLost",
			fmt.Sprintf("CNS volume %s no longer exists", volumeName)))
	}
	for _, c := range now.Conditions {
		if slices.ContainsFunc(prev.Conditions, func(p model.PersistentVolumeClaimCondition) bool {
			return p.Type == c.Type && p.Status == c.Status && p.Message == c.Message
		}) {
			continue
		}
		switch c.Type {
		case conditionInUse:
			out = append(out, warning(events.TypeClaimInUse, "InUse", upperFirst(c.Message)))
		case conditionResizeError:
			out = append(out, warning(events.TypeClaimResizeFailed, "VolumeResizeFailed", upperFirst(c.Message)))
		case conditionWaitForConsumer:
			out = append(out, normal(events.TypeClaimWaiting, "WaitForFirstConsumer", c.Message))
		case conditionProvisioningFail:
			out = append(out, warning(events.TypeClaimProvisioningFailed, "ProvisioningFailed", upperFirst(c.Message)))
		}
	}
	return out
}

// announce publishes the events of the claim's change, each with an ID of the claim's
// record, so a retried reconcile of the same record publishes it once.
func (c *claims) announce(ctx context.Context, o reconcile.Object, prev model.PersistentVolumeClaimStatus, res reconcile.Result, volumeName string) error {
	now, ok := res.Status.(model.PersistentVolumeClaimStatus)
	if !ok {
		return nil
	}
	for _, a := range claimChanges(prev, now, volumeName) {
		what := a.typ[strings.LastIndex(a.typ, ".")+1:]
		id := fmt.Sprintf("%s/%s/%d", o.Meta.UID, what, o.Spec.Seq)
		if err := events.PublishEvent(ctx, c.js, o.Ref, a.typ, id, a.data); err != nil {
			return err
		}
	}
	return nil
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
