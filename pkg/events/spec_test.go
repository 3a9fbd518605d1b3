package events_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

var vmA = events.Ref{Plural: "virtualmachines", Namespace: "default", Name: "vm-a"}

func TestAppendSpecIsACompareAndSwap(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	js, _ := eventstest.JetStream(t)

	if _, err := events.LastSpec(ctx, js, vmA); !errors.Is(err, events.ErrNotFound) {
		t.Fatalf("LastSpec of a new object = %v, want ErrNotFound", err)
	}
	first, err := events.AppendSpec(ctx, js, vmA, events.OpPut, []byte(`{"v":1}`), 0, nats.Header{"X-Request-Id": {"r1"}})
	if err != nil {
		t.Fatalf("first AppendSpec = %v", err)
	}
	if _, err := events.AppendSpec(ctx, js, vmA, events.OpPut, []byte(`{"v":"other"}`), 0, nil); !errors.Is(err, events.ErrConflict) {
		t.Errorf("second create at 0 = %v, want ErrConflict", err)
	}
	second, err := events.AppendSpec(ctx, js, vmA, events.OpPut, []byte(`{"v":2}`), first, nil)
	if err != nil {
		t.Fatalf("update at %d = %v", first, err)
	}
	if _, err := events.AppendSpec(ctx, js, vmA, events.OpPut, []byte(`{"v":"stale"}`), first, nil); !errors.Is(err, events.ErrConflict) {
		t.Errorf("update at stale %d = %v, want ErrConflict", first, err)
	}

	got, err := events.LastSpec(ctx, js, vmA)
	if err != nil {
		t.Fatalf("LastSpec = %v", err)
	}
	want := events.SpecRecord{Ref: vmA, Seq: second, Op: events.OpPut, Body: []byte(`{"v":2}`)}
	if diff := cmp.Diff(want, got, cmp.FilterPath(isTimeOrHeader, cmp.Ignore())); diff != "" {
		t.Errorf("LastSpec mismatch (-want +got):\n%s", diff)
	}
	if got.Time.IsZero() || got.Header.Get(events.HeaderOp) != events.OpPut {
		t.Errorf("LastSpec time %v, %s header %q; want a time and put", got.Time, events.HeaderOp, got.Header.Get(events.HeaderOp))
	}
}

func isTimeOrHeader(p cmp.Path) bool {
	s := p.String()
	return s == "Time" || s == "Header"
}

func TestAppendSpecRetryCollapses(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	js, _ := eventstest.JetStream(t)

	body := []byte(`{"v":1}`)
	first, err := events.AppendSpec(ctx, js, vmA, events.OpPut, body, 0, nil)
	if err != nil {
		t.Fatalf("AppendSpec = %v", err)
	}
	// The caller lost the answer and tries again with the same arguments.
	retry, err := events.AppendSpec(ctx, js, vmA, events.OpPut, body, 0, nil)
	if err != nil || retry != first {
		t.Errorf("retried AppendSpec = %d, %v; want %d, nil", retry, err, first)
	}
	// The same body as a tombstone is a different record, not a retry.
	if _, err := events.AppendSpec(ctx, js, vmA, events.OpDelete, body, 0, nil); !errors.Is(err, events.ErrConflict) {
		t.Errorf("delete at 0 = %v, want ErrConflict", err)
	}
	st, err := js.Stream(ctx, events.StreamSpecs)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Errorf("SPECS holds %d messages, want 1", info.State.Msgs)
	}
}

func TestAppendSpecTombstone(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	js, _ := eventstest.JetStream(t)

	seq, err := events.AppendSpec(ctx, js, vmA, "", []byte(`{"v":1}`), 0, nil)
	if err != nil {
		t.Fatalf("AppendSpec = %v", err)
	}
	if seq, err = events.AppendSpec(ctx, js, vmA, events.OpDelete, []byte(`{"v":1}`), seq, nil); err != nil {
		t.Fatalf("AppendSpec(delete) = %v", err)
	}
	got, err := events.LastSpec(ctx, js, vmA)
	if err != nil || got.Op != events.OpDelete || got.Seq != seq {
		t.Errorf("LastSpec = %+v, %v; want the tombstone at %d", got, err, seq)
	}
}

// TestAppendSpecConcurrentWriters shows that racing read-modify-write loops
// never lose an update: every append wins exactly once.
func TestAppendSpecConcurrentWriters(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	js, _ := eventstest.JetStream(t)
	const writers, writes = 4, 5

	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range writes {
				for {
					var last uint64
					rec, err := events.LastSpec(ctx, js, vmA)
					if err == nil {
						last = rec.Seq
					} else if !errors.Is(err, events.ErrNotFound) {
						t.Errorf("LastSpec = %v", err)
						return
					}
					_, err = events.AppendSpec(ctx, js, vmA, events.OpPut, fmt.Appendf(nil, `{"w":%d,"i":%d}`, w, i), last, nil)
					if err == nil {
						break
					}
					if !errors.Is(err, events.ErrConflict) {
						t.Errorf("AppendSpec = %v", err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	rec, err := events.LastSpec(ctx, js, vmA)
	if err != nil || rec.Seq != writers*writes {
		t.Errorf("last record at %d (%v), want %d: every write stored once", rec.Seq, err, writers*writes)
	}
}

func TestAppendSpecRejects(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	js, _ := eventstest.JetStream(t)

	bad := events.Ref{Plural: "virtualmachines", Namespace: "default", Name: "a_b"}
	if _, err := events.AppendSpec(ctx, js, bad, events.OpPut, nil, 0, nil); !errors.Is(err, events.ErrInvalidRef) {
		t.Errorf("AppendSpec(%v) = %v, want ErrInvalidRef", bad, err)
	}
	if _, err := events.AppendSpec(ctx, js, vmA, "frob", nil, 0, nil); err == nil {
		t.Error("AppendSpec(op frob) succeeded, want an error")
	}
}

func TestLastSpecRejectsUnknownOp(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	js, _ := eventstest.JetStream(t)

	msg := &nats.Msg{Subject: events.SpecSubject(vmA), Data: []byte(`{}`), Header: nats.Header{events.HeaderOp: {"frob"}}}
	if _, err := js.PublishMsg(ctx, msg); err != nil {
		t.Fatal(err)
	}
	if _, err := events.LastSpec(ctx, js, vmA); !errors.Is(err, events.ErrMalformed) {
		t.Errorf("LastSpec of an unknown op = %v, want ErrMalformed", err)
	}
}

// A tombstone leaves only itself of the object's history: the older records go, the
// tombstone stays the CAS base of a re-creation, and other objects keep theirs.
func TestTombstoneRollsUpTheObjectsHistory(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	js, _ := eventstest.JetStream(t)
	vmB := events.Ref{Plural: "virtualmachines", Namespace: "default", Name: "vm-b"}

	var last uint64
	for i := range 3 {
		seq, err := events.AppendSpec(ctx, js, vmA, events.OpPut, fmt.Appendf(nil, `{"v":%d}`, i), last, nil)
		if err != nil {
			t.Fatalf("AppendSpec %d = %v", i, err)
		}
		last = seq
	}
	if _, err := events.AppendSpec(ctx, js, vmB, events.OpPut, []byte(`{"b":1}`), 0, nil); err != nil {
		t.Fatalf("AppendSpec vm-b = %v", err)
	}
	tomb, err := events.AppendSpec(ctx, js, vmA, events.OpDelete, []byte(`{"v":2}`), last, nil)
	if err != nil {
		t.Fatalf("delete = %v", err)
	}

	st, err := js.Stream(ctx, events.StreamSpecs)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter("vmop.spec.>"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{events.SpecSubject(vmA): 1, events.SpecSubject(vmB): 1}
	if diff := cmp.Diff(want, info.State.Subjects); diff != "" {
		t.Errorf("records per subject after the tombstone (-want +got):\n%s", diff)
	}
	got, err := events.LastSpec(ctx, js, vmA)
	if err != nil || got.Seq != tomb || got.Op != events.OpDelete {
		t.Fatalf("LastSpec = %d %s, %v; want the tombstone %d", got.Seq, got.Op, err, tomb)
	}
	if _, err := events.AppendSpec(ctx, js, vmA, events.OpPut, []byte(`{"v":"again"}`), tomb, nil); err != nil {
		t.Errorf("re-create on the tombstone = %v", err)
	}
}

// SpecAt reads an object's record at a sequence, also once newer ones exist; a sequence
// of another object or none is ErrNotFound.
func TestSpecAt(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	js, _ := eventstest.JetStream(t)
	first, err := events.AppendSpec(ctx, js, vmA, events.OpPut, []byte(`{"v":1}`), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := events.AppendSpec(ctx, js, vmA, events.OpPut, []byte(`{"v":2}`), first, nil); err != nil {
		t.Fatal(err)
	}
	got, err := events.SpecAt(ctx, js, vmA, first)
	if err != nil || string(got.Body) != `{"v":1}` || got.Seq != first {
		t.Errorf("SpecAt(%d) = %s at %d, %v; want the first record", first, got.Body, got.Seq, err)
	}
	other := events.Ref{Plural: "virtualmachines", Namespace: "default", Name: "vm-b"}
	if _, err := events.SpecAt(ctx, js, other, first); !errors.Is(err, events.ErrNotFound) {
		t.Errorf("SpecAt of another object's record = %v, want ErrNotFound", err)
	}
	if _, err := events.SpecAt(ctx, js, vmA, 999); !errors.Is(err, events.ErrNotFound) {
		t.Errorf("SpecAt of no record = %v, want ErrNotFound", err)
	}
}
