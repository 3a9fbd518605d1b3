package reconcile_test

import (
	"context"
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
	runLoop(t, ctx, js, reconcile.Config{Service: "power", Plural: "virtualmachines", Resync: 100 * time.Millisecond},
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
	deadline := time.Now().Add(20 * time.Second)
	for n.Load() < want {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d reconciles before the deadline, want %d", what, n.Load(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
