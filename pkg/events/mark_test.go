package events_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
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

// The requests a mark's check makes (the stream's handle and its info), left unanswered
// by the server (a clustered one drops some while a group elects its leader), are asked
// again: the mark holds, instead of the check failing with the first timeout.
func TestCheckMarkAsksAgainWhenUnanswered(t *testing.T) {
	s := eventstest.Server(t)
	js, _ := eventstest.Connect(t, s)
	ctx := testContext(t)
	if err := events.Setup(ctx, js); err != nil {
		t.Fatal(err)
	}
	seq, err := events.AppendSpec(ctx, js, vmA, events.OpPut, []byte(`{"a":1}`), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := markAt(ctx, t, js, events.StreamSpecs, seq)
	var lost atomic.Int32
	lossy := eventstest.Lossy(t, s, 500*time.Millisecond, func(subject string, _ *nats.Msg, _ *string) bool {
		return subject == "$JS.API.STREAM.INFO."+events.StreamSpecs && lost.Add(1) <= 2 // the handle's and the info's first asks
	})
	if err := events.CheckMark(ctx, lossy, events.StreamSpecs, m); err != nil || lost.Load() < 3 {
		t.Errorf("CheckMark with its first info requests lost: %v (%d asked), want the mark to hold after asking again", err, lost.Load())
	}
}
