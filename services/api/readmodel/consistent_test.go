package readmodel

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/vmop/vmop/pkg/events"
)

// A consistent read waits for what the streams held when it came: with the fold stopped
// it does not return; once the fold runs it returns, and the write is there.
func TestWaitCurrentWaitsForTheStreams(t *testing.T) {
	h := newHarness(t)
	heads := NewHeads(h.js)
	a := obj{ns: "ns", name: "a", uid: "a"}
	h.waitSpec(h.put(a))
	h.stop()
	h.stop = nil
	b := obj{ns: "ns", name: "b", uid: "b"}
	h.put(b)

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := h.store.WaitCurrent(ctx, heads); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitCurrent with the fold stopped = %v, want the deadline", err)
	}
	h.fold()
	ctx, cancel = context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if err := h.store.WaitCurrent(ctx, heads); err != nil {
		t.Fatalf("WaitCurrent = %v", err)
	}
	h.get(b)
}

// A stream whose last message was deleted (a purged status slice) holds nothing more for
// the fold to apply: the consistent read returns once the fold has the rest.
func TestWaitCurrentPastADeletedTail(t *testing.T) {
	h := newHarness(t)
	heads := NewHeads(h.js)
	a := obj{ns: "ns", name: "a", uid: "a"}
	h.waitSpec(h.put(a))
	h.waitStatus(h.status(a, "power", "a", false, `{"powerState":"PoweredOn"}`))
	h.stop()
	h.stop = nil
	h.status(a, "storage", "a", false, `{"storage":{}}`)
	gone := h.status(a, "network", "a", false, `{"network":{}}`)
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	st, err := h.js.Stream(ctx, events.StreamStatus)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteMsg(ctx, gone); err != nil {
		t.Fatal(err)
	}
	h.fold()
	if err := h.store.WaitCurrent(ctx, heads); err != nil {
		t.Fatalf("WaitCurrent = %v", err)
	}
	if got := h.get(a); got.StatusSeq != gone-1 {
		t.Errorf("after the consistent read a's status is at %d, want %d (the storage slice)", got.StatusSeq, gone-1)
	}
}
