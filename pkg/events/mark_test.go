package events_test

import (
	"context"
	"errors"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// A mark holds while the stream keeps its history, also when the marked message was
// superseded, and fails once the stream was recreated or holds other messages there.
func TestCheckMarkTellsAKeptHistoryFromAnother(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	var js jetstream.JetStream
	vmB := events.Ref{Plural: "virtualmachines", Namespace: "default", Name: "vm-b"}
	vmC := events.Ref{Plural: "virtualmachines", Namespace: "default", Name: "vm-c"}
	appendSpec := func(ref events.Ref, op, body string, expect uint64) uint64 {
		t.Helper()
		seq, err := events.AppendSpec(ctx, js, ref, op, []byte(body), expect, nil)
		if err != nil {
			t.Fatalf("AppendSpec(%s, %s) = %v", ref, op, err)
		}
		return seq
	}
	check := func(what string, m events.Mark, wantDiverged bool) {
		t.Helper()
		err := events.CheckMark(ctx, js, events.StreamSpecs, m)
		if diverged := errors.Is(err, events.ErrDiverged); diverged != wantDiverged || (err != nil && !diverged) {
			t.Errorf("%s: CheckMark = %v, want diverged %v", what, err, wantDiverged)
		}
	}
	// Another server's streams stand for a store that was lost, recreated or restored:
	// deleting and recreating a file stream can bring its old files back.
	recreate := func() { js, _ = eventstest.JetStream(t) }

	recreate()
	check("nothing read", events.Mark{}, false)
	appendSpec(vmA, events.OpPut, `{"a":1}`, 0)
	b := appendSpec(vmB, events.OpPut, `{"b":1}`, 0)
	m := markAt(ctx, t, js, events.StreamSpecs, b)
	if m.Subject != events.SpecSubject(vmB) || m.Seq != b {
		t.Fatalf("mark %+v, want seq %d of %s", m, b, events.SpecSubject(vmB))
	}
	check("the marked message is there", m, false)
	appendSpec(vmB, events.OpDelete, `{"b":1}`, b)
	check("rolled up by its tombstone", m, false)

	slice := events.Slice{Service: "power", UID: "u", Generation: 1}
	sseq, err := events.PublishStatus(ctx, js, vmB, slice)
	if err != nil {
		t.Fatal(err)
	}
	sm := markAt(ctx, t, js, events.StreamStatus, sseq)
	if err := events.PurgeStatus(ctx, js, vmB); err != nil {
		t.Fatal(err)
	}
	if err := events.CheckMark(ctx, js, events.StreamStatus, sm); err != nil {
		t.Errorf("a slice purged with its object: CheckMark = %v, want nil", err)
	}

	recreate()
	check("the stream was recreated", m, true)
	appendSpec(vmB, events.OpPut, `{"b":"other"}`, 0)
	appendSpec(vmC, events.OpPut, `{"c":1}`, 0)
	check("another message at the position", m, true)

	recreate()
	appendSpec(vmB, events.OpPut, `{"b":1}`, 0)
	c := appendSpec(vmC, events.OpPut, `{"c":1}`, 0)
	appendSpec(vmC, events.OpDelete, `{"c":1}`, c)
	check("the position is gone and its subject was not written since", m, true)
}

func markAt(ctx context.Context, t *testing.T, js jetstream.JetStream, stream string, seq uint64) events.Mark {
	t.Helper()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := st.GetMsg(ctx, seq)
	if err != nil {
		t.Fatal(err)
	}
	return events.MarkOf(raw.Sequence, raw.Subject, raw.Header, raw.Data)
}
