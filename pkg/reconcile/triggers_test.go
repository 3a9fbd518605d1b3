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

// A reconcile runs again when an input service publishes a slice and when a related
// object of the same namespace changes, and it sees the input's slice.
func TestInputsAndRelatedTriggerReconcile(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ctx := t.Context()
	seen := make(chan reconcile.Object, 100)
	runLoop(t, ctx, js, reconcile.Config{
		Service: "power", Plural: "virtualmachines",
		Inputs: []string{"placement"}, Related: []string{"virtualmachineclasses"},
	}, func(_ context.Context, o reconcile.Object) (reconcile.Result, error) {
		seen <- o
		return reconcile.Result{}, nil
	})
	if _, err := events.AppendSpec(ctx, js, vmRef, events.OpPut, []byte(`{"metadata":{"uid":"u1","generation":1}}`), 0, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, seen, "the spec", func(o reconcile.Object) bool { return o.Meta.UID == "u1" })

	if _, err := events.PublishStatus(ctx, js, vmRef, events.Slice{Service: "placement", UID: "u1", Generation: 1, Status: []byte(`{"uniqueID":"vm-1"}`)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, seen, "placement's slice", func(o reconcile.Object) bool {
		return string(o.Slices["placement"].Status) == `{"uniqueID":"vm-1"}`
	})

	// Nothing else is due (the reconcile that read placement's slice was its message's):
	// what comes after the class is the class's. Drained after the append, the channel
	// could lose that very reconcile.
	drain(seen)
	class := events.Ref{Plural: "virtualmachineclasses", Namespace: "ns", Name: "small"}
	if _, err := events.AppendSpec(ctx, js, class, events.OpPut, []byte(`{"metadata":{"uid":"c1"}}`), 0, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, seen, "a reconcile after the class appeared", func(o reconcile.Object) bool { return o.Ref == vmRef })
}

func waitFor(t *testing.T, seen <-chan reconcile.Object, what string, ok func(reconcile.Object) bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case o := <-seen:
			if ok(o) {
				return
			}
		case <-deadline:
			t.Fatalf("no reconcile for %s before the deadline", what)
		}
	}
}

func drain(seen <-chan reconcile.Object) {
	for {
		select {
		case <-seen:
		default:
			return
		}
	}
}

// With Relate, a related change reconciles only the objects it names (a VM naming a
// claim reconciles that claim, not every claim of the namespace), and all of them when
// Relate says so.
func TestRelateNarrowsRelatedChanges(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ctx := t.Context()
	seen := make(chan reconcile.Object, 100)
	claimA := events.Ref{Plural: "persistentvolumeclaims", Namespace: "ns", Name: "a"}
	claimB := events.Ref{Plural: "persistentvolumeclaims", Namespace: "ns", Name: "b"}
	runLoop(t, ctx, js, reconcile.Config{
		Service: "storage", Plural: "persistentvolumeclaims", Related: []string{"virtualmachines"},
		Relate: func(_ context.Context, rec events.SpecRecord) ([]string, bool, error) {
			return []string{"a"}, rec.Op == events.OpDelete, nil
		},
	}, func(_ context.Context, o reconcile.Object) (reconcile.Result, error) {
		seen <- o
		return reconcile.Result{}, nil
	})
	for _, ref := range []events.Ref{claimA, claimB} {
		if _, err := events.AppendSpec(ctx, js, ref, events.OpPut, []byte(`{"metadata":{"uid":"`+ref.Name+`","generation":1}}`), 0, nil); err != nil {
			t.Fatal(err)
		}
		waitFor(t, seen, ref.Name, func(o reconcile.Object) bool { return o.Ref == ref })
	}

	drain(seen)
	vm := events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: "vm"}
	seq, err := events.AppendSpec(ctx, js, vm, events.OpPut, []byte(`{"metadata":{"uid":"v"}}`), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var bs []int64 // the generations b was reconciled at from here on
	recordB := func(o reconcile.Object) {
		if o.Ref == claimB {
			bs = append(bs, o.Meta.Generation)
		}
	}
	waitFor(t, seen, "the named claim after the VM changed", func(o reconcile.Object) bool {
		recordB(o)
		return o.Ref == claimA
	})
	// b's own change is the barrier: had the VM's change queued b too, b is reconciled
	// twice by the time its generation 2 is seen (or once with generation 1 first).
	if _, err := events.AppendSpec(ctx, js, claimB, events.OpPut, []byte(`{"metadata":{"uid":"b","generation":2}}`), 2, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, seen, "b's own change", func(o reconcile.Object) bool {
		recordB(o)
		return o.Ref == claimB && o.Meta.Generation == 2
	})
	if len(bs) != 1 {
		t.Errorf("claim b was reconciled at generations %v after a change of a VM that does not name it, want [2]", bs)
	}

	drain(seen)
	if _, err := events.AppendSpec(ctx, js, vm, events.OpDelete, []byte(`{"metadata":{"uid":"v"}}`), seq, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, seen, "b after the VM was deleted (all claims)", func(o reconcile.Object) bool { return o.Ref == claimB })
}

// Run returns only after the reconciles a related change queued have ended: a stopped
// loop leaves nothing of its own acting on an object (beside the loop that replaces it).
func TestRunAwaitsQueuedReconciles(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ctx, stop := context.WithCancel(t.Context())
	first, entered, returned := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	var endedAfterRun atomic.Bool
	f := func(context.Context, reconcile.Object) (reconcile.Result, error) {
		switch calls.Add(1) {
		case 1: // the spec's
			close(first)
		case 2: // the class change's
			close(entered)
			select {
			case <-returned: // Run returned while this reconcile still ran
				endedAfterRun.Store(true)
			case <-time.After(time.Second): // how long a reconcile Run waits for may take
			}
		}
		return reconcile.Result{}, nil
	}
	done := make(chan error, 1)
	go func() {
		done <- reconcile.Run(ctx, js, reconcile.Config{Service: "power", Plural: "virtualmachines",
			Related: []string{"virtualmachineclasses"}}, f)
		close(returned)
	}()
	if _, err := events.AppendSpec(t.Context(), js, vmRef, events.OpPut, []byte(`{"metadata":{"uid":"u1","generation":1}}`), 0, nil); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, first, "the spec's reconcile")
	class := events.Ref{Plural: "virtualmachineclasses", Namespace: "ns", Name: "small"}
	if _, err := events.AppendSpec(t.Context(), js, class, events.OpPut, []byte(`{"metadata":{"uid":"c1"}}`), 0, nil); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, entered, "the class change's reconcile")
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if endedAfterRun.Load() {
		t.Error("Run returned while a queued reconcile still ran")
	}
}

func waitClosed(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s before the deadline", what)
	}
}
