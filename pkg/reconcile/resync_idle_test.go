package reconcile_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/reconcile"
)

// The resync passes over an object whose last reconcile answered Idle, and takes it up
// again once a reconcile (here of a new spec) says it is not.
func TestResyncPassesIdleObjectsOver(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ctx := t.Context()
	idle := events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: "idle"}
	busy := events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: "busy"}
	var idleCalls, busyCalls atomic.Int32
	// The first round begins a second after the loop: the specs' reconciles come first.
	runLoop(t, ctx, js, reconcile.Config{Service: "power", Plural: "virtualmachines", Resync: time.Second},
		func(_ context.Context, o reconcile.Object) (reconcile.Result, error) {
			if o.Ref == busy {
				busyCalls.Add(1)
				return reconcile.Result{}, nil
			}
			idleCalls.Add(1)
			return reconcile.Result{Idle: o.Meta.Generation == 1}, nil
		})
	var idleSeq uint64
	for _, ref := range []events.Ref{idle, busy} {
		seq, err := events.AppendSpec(ctx, js, ref, events.OpPut, []byte(`{"metadata":{"uid":"u-`+ref.Name+`","generation":1}}`), 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ref == idle {
			idleSeq = seq
		}
	}
	waitCount(t, &busyCalls, 4, "the busy object reconciled by its spec and three resyncs")
	if n := idleCalls.Load(); n != 1 {
		t.Fatalf("the idle object was reconciled %d times while the other was resynced, want once (its spec's)", n)
	}

	if _, err := events.AppendSpec(ctx, js, idle, events.OpPut, []byte(`{"metadata":{"uid":"u-idle","generation":2}}`), idleSeq, nil); err != nil {
		t.Fatal(err)
	}
	waitCount(t, &idleCalls, 4, "the object no longer idle reconciled by its new spec and two resyncs")
}

// waitCount waits, with a deadline, until n reaches at least want.
func waitCount(t *testing.T, n *atomic.Int32, want int32, what string) {
	t.Helper()
	waitTrue(t, what, func() bool { return n.Load() >= want })
}

// waitTrue waits, with a deadline, until ok.
func waitTrue(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(10 * time.Millisecond) { // poll interval
		if time.Now().After(deadline) {
			t.Fatalf("%s: not before the deadline", what)
		}
	}
}

// An object that becomes idle while a round is under way is passed over when its turn
// comes: a round over many objects lasts hours.
func TestResyncPassesOverObjectsIdleSinceTheRoundBegan(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ctx := t.Context()
	const n = 20 // a round of 20 seconds, at one object a second
	var idle atomic.Bool
	var firstCalls atomic.Int32 // of generation 1
	var mu sync.Mutex
	calls := map[string]int{} // of generation 2, by object
	runLoop(t, ctx, js, reconcile.Config{Service: "power", Plural: "virtualmachines", Resync: 100 * time.Millisecond},
		func(_ context.Context, o reconcile.Object) (reconcile.Result, error) {
			if o.Meta.Generation == 1 {
				firstCalls.Add(1)
			} else {
				mu.Lock()
				calls[o.Ref.Name]++
				mu.Unlock()
			}
			return reconcile.Result{Idle: idle.Load()}, nil
		})
	refs := make([]events.Ref, n)
	seqs := make([]uint64, n)
	for i := range refs {
		refs[i] = events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: fmt.Sprintf("vm-%02d", i)}
		seq, err := events.AppendSpec(ctx, js, refs[i], events.OpPut, fmt.Appendf(nil, `{"metadata":{"uid":"u%d","generation":1}}`, i), 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		seqs[i] = seq
	}
	waitCount(t, &firstCalls, n+1, "every spec's reconcile and the round's first")

	idle.Store(true)
	for i, ref := range refs {
		if _, err := events.AppendSpec(ctx, js, ref, events.OpPut, fmt.Appendf(nil, `{"metadata":{"uid":"u%d","generation":2}}`, i), seqs[i], nil); err != nil {
			t.Fatal(err)
		}
	}
	reconciled := func() (objects, all int) {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range calls {
			all += c
		}
		return len(calls), all
	}
	waitTrue(t, "every new spec reconciled", func() bool {
		objects, _ := reconciled()
		return objects == n
	})
	// Three more turns of the round under way, each of which would resync an object. One
	// resync queued while the new specs were reconciled may still run.
	_, before := reconciled()
	<-time.After(3 * time.Second)
	if _, after := reconciled(); after-before > 1 {
		t.Errorf("%d reconciles in 3 s of a round over objects that all said they are idle, want at most 1", after-before)
	}
}
