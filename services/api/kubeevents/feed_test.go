package kubeevents

import (
	"testing"
	"time"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// When its ordered consumer cannot be recreated (placed on a killed NATS node, every
// creation under its name unanswered), the fold follows EVENTS again with a new consumer
// from the Event after the last it folded: an Event published meanwhile arrives, and none
// is folded twice.
func TestFoldFollowsAgainWhenItsConsumerCannotBeRecreated(t *testing.T) {
	admin, js, unanswered := eventstest.LosingRecreations(t, 500*time.Millisecond, "")
	publish(t, admin, vmA, events.TypeVirtualMachineCreated, "uid-a/created", map[string]any{})
	st := folding(t, js, t.TempDir())
	synced(t, st, admin)

	eventstest.DropConsumers(t, admin, events.StreamEvents)
	publish(t, admin, vmA, events.TypeVirtualMachinePoweredOn, "uid-a/poweredon/2", map[string]any{})
	// nats.go gives a recreation 10 s before it counts as unanswered (longer than Sync waits).
	deadline := time.Now().Add(time.Minute)
	for st.RV() != "2" {
		if time.Now().After(deadline) {
			t.Fatalf("the Event published after the feed's consumer was lost never arrived (%d recreations unanswered; folded up to %s)", unanswered.Load(), st.RV())
		}
		time.Sleep(10 * time.Millisecond) // polling the fold's position
	}
	if unanswered.Load() == 0 {
		t.Error("no recreation of the consumer was left unanswered: the test did not test the loss")
	}
	res, err := st.List(ListOptions{Namespace: "ns-1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := reasons(decodeEvents(t, res.Items)); !equal(got, []string{"vm-a:Created", "vm-a:PoweredOn"}) {
		t.Errorf("events after the feed was followed again = %v, want Created and PoweredOn once each", got)
	}
}
