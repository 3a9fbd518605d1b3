package readmodel

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// A NATS node killed (not shut down) still counts as a live peer for minutes, so the
// consumer that an ordered consumer recreates after losing its server may be placed on
// the dead node, and every creation under that name goes unanswered. The fold then
// follows the stream again with a new consumer rather than stalling: here every
// recreation of a feed's consumer goes unanswered, and a write still reaches the read
// model.
func TestFoldFollowsAgainWhenItsConsumerCannotBeRecreated(t *testing.T) {
	admin, js, unanswered := eventstest.LosingRecreations(t, 500*time.Millisecond, "")
	h := &harness{t: t, js: js, path: filepath.Join(t.TempDir(), "readmodel.db"), last: map[events.Ref]uint64{}}
	h.open()
	h.fold()
	t.Cleanup(h.close)
	h.js = admin // the harness writes directly
	h.waitSpec(h.put(obj{ns: "ns", name: "a", uid: "a"}))
	if !h.store.Following() {
		t.Error("Following() = false with the feeds open")
	}

	// Losing its consumer makes the ordered consumer recreate itself, unanswered.
	eventstest.DropConsumers(t, admin, events.StreamSpecs)
	seq := h.put(obj{ns: "ns", name: "b", uid: "b"})
	// nats.go gives a recreation 10 s before it counts as unanswered.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := h.store.WaitSpec(ctx, seq); err != nil {
		t.Fatalf("the write after the feed's consumer was lost never reached the read model (%d recreations unanswered): %v", unanswered.Load(), err)
	}
	if unanswered.Load() == 0 {
		t.Error("no recreation of the consumer was left unanswered: the test did not test the loss")
	}
	h.get(obj{ns: "ns", name: "b"})
}
