package power

import (
	"context"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// powerEventTypes are the CloudEvents of reaching each power state.
var powerEventTypes = map[model.PowerState]string{
	model.PowerStateOn:        events.TypeVirtualMachinePoweredOn,
	model.PowerStateOff:       events.TypeVirtualMachinePoweredOff,
	model.PowerStateSuspended: events.TypeVirtualMachineSuspended,
}

// powerEvent is the data of the powered-on, powered-off and suspended events.
type powerEvent struct {
	PowerState         model.PowerState `json:"powerState"`
	PreviousPowerState model.PowerState `json:"previousPowerState"`
	UniqueID           string           `json:"uniqueID"`
	// OutOfBand: the change was not vmop's doing (someone used vCenter directly).
	OutOfBand bool `json:"outOfBand,omitempty"`
}

// blockedEvent is the data of the power-on blocked event.
type blockedEvent struct {
	Checks  map[string]string `json:"checks"` // component → annotation value
	Message string            `json:"message"`
}

// unblockedEvent is the data of the power-on unblocked event.
type unblockedEvent struct {
	PowerState model.PowerState `json:"powerState,omitempty"` // observed when the last check went
}

// notifier publishes the CloudEvents of each step between two recorded states of a VM,
// before the slice recording the later one. An event's id is "<uid>/<what>/<seq>", seq
// being the STATUS sequence of the slice the step starts from: a retried reconcile
// repeats it and collapses into the first publish, and every step starts from a slice of
// its own (a change seen in vCenter is recorded before vmop acts on it), so no two
// changes share an id.
type notifier struct {
	js  jetstream.JetStream
	ref events.Ref
	uid string
}

// step is one move of the VM from the state a slice recorded to the next.
type step struct {
	fromSeq  uint64
	from     powerStatus      // the slice recorded
	previous model.PowerState // the power state the VM was seen in before the move
	to       powerStatus      // what is about to be recorded
	st       syncState        // what to's condition says
	uniqueID string
	byVMOP   bool // to's power state is the result of vmop's own operation
}

// notify publishes the events of s: the VM reached another power state, power-on became
// blocked by checks, or the last check went.
func (n notifier) notify(ctx context.Context, s step) error {
	if s.to.PowerState != "" && s.previous != "" && s.to.PowerState != s.previous {
		data := powerEvent{PowerState: s.to.PowerState, PreviousPowerState: s.previous, UniqueID: s.uniqueID, OutOfBand: !s.byVMOP}
		if err := n.publish(ctx, s.fromSeq, powerEventTypes[s.to.PowerState], data); err != nil {
			return err
		}
	}
	wasBlocked := false
	if c := reconcile.FindCondition(s.from.Conditions, model.ConditionPowerStateSynced); c != nil {
		wasBlocked = c.Reason == reasonPowerOnBlocked
	}
	switch {
	case s.st.blocked() && !wasBlocked:
		data := blockedEvent{Checks: s.st.checks, Message: s.st.condition().Message}
		return n.publish(ctx, s.fromSeq, events.TypeVirtualMachinePowerOnBlocked, data)
	case wasBlocked && len(s.st.checks) == 0 && s.st.desired == model.PowerStateOn:
		return n.publish(ctx, s.fromSeq, events.TypeVirtualMachinePowerOnUnblocked, unblockedEvent{PowerState: s.to.PowerState})
	}
	return nil
}

func (n notifier) publish(ctx context.Context, seq uint64, typ string, data any) error {
	what := typ[strings.LastIndex(typ, ".")+1:]
	id := fmt.Sprintf("%s/%s/%d", n.uid, what, seq)
	return events.PublishEvent(ctx, n.js, n.ref, typ, id, data)
}
