package reconcile_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/reconcile"
)

// A service's record is published with its slice, and an answer given without calling
// its Func (a change that does not concern it) keeps it: the record is the service's
// memory of what the status cannot tell.
func TestConcernKeepsTheRecord(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ctx := t.Context()
	var calls atomic.Int32
	count := countingFunc(&calls)
	runConcerned(t, js, func(ctx context.Context, o reconcile.Object) (reconcile.Result, error) {
		res, err := count(ctx, o)
		res.Record = map[string]int32{"call": calls.Load()}
		return res, err
	})
	seq, err := events.AppendSpec(ctx, js, vmRef, events.OpPut, vmRecord(1, 1, ""), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	first := waitSlice(t, js, func(s events.Slice) bool { return s.Generation == 1 })
	if string(first.Record) != `{"call":1}` {
		t.Fatalf("record %s of the first slice, want the Func's {\"call\":1}", first.Record)
	}
	if _, err := events.AppendSpec(ctx, js, vmRef, events.OpPut, vmRecord(2, 1, `{"name":"a"}`), seq, nil); err != nil {
		t.Fatal(err)
	}
	second := waitSlice(t, js, func(s events.Slice) bool { return s.Generation == 2 })
	if calls.Load() != 1 || string(second.Record) != string(first.Record) {
		t.Errorf("after an ignored change: %d calls, record %s; want 1 call and the record kept, %s", calls.Load(), second.Record, first.Record)
	}
}
