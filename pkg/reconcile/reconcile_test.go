package reconcile_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/reconcile"
)

var vmRef = events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: "vm.one"}

// The loop reconciles the latest spec and publishes the service's slice with the
// generation it saw; an object marked for deletion is released.
func TestRunPublishesSliceAndReleases(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ctx := t.Context()
	var calls atomic.Int32
	runLoop(t, ctx, js, reconcile.Config{Service: "placement", Plural: "virtualmachines"},
		func(_ context.Context, o reconcile.Object) (reconcile.Result, error) {
			calls.Add(1)
			return reconcile.Result{Status: map[string]any{"seen": o.Meta.Generation}, Released: o.Deleting()}, nil
		})

	seq, err := events.AppendSpec(ctx, js, vmRef, events.OpPut, []byte(`{"metadata":{"uid":"u1","generation":2}}`), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	slice := waitSlice(t, js, func(s events.Slice) bool { return s.Generation == 2 })
	if slice.Service != "placement" || slice.UID != "u1" || slice.Released || string(slice.Status) != `{"seen":2}` {
		t.Errorf("slice = %+v, want placement's, uid u1, status {\"seen\":2}, not released", slice)
	}

	deleting := `{"metadata":{"uid":"u1","generation":2,"deletionTimestamp":"2026-11-22T00:00:00Z"}}`
	if _, err := events.AppendSpec(ctx, js, vmRef, events.OpPut, []byte(deleting), seq, nil); err != nil {
		t.Fatal(err)
	}
	waitSlice(t, js, func(s events.Slice) bool { return s.Released })
	if calls.Load() < 2 {
		t.Errorf("reconciled %d times, want at least 2", calls.Load())
	}
}

// runLoop runs the loop on js until the test ends (or ctx does), and fails the test if it
// returns an error.
func runLoop(t *testing.T, ctx context.Context, js jetstream.JetStream, cfg reconcile.Config, f reconcile.Func) {
	runUntilCleanup(t, ctx, func(ctx context.Context) error { return reconcile.Run(ctx, js, cfg, f) })
}

// runUntilCleanup runs run until the test ends (or ctx does), and fails the test if it
// returns an error.
func runUntilCleanup(t *testing.T, ctx context.Context, run func(context.Context) error) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// waitSlice waits, with a deadline, until placement's newest slice satisfies ok.
func waitSlice(t *testing.T, js jetstream.JetStream, ok func(events.Slice) bool) events.Slice {
	t.Helper()
	return waitSliceOf(t, js, "placement", ok)
}

// waitSliceOf waits, with a deadline, until service's newest slice satisfies ok.
func waitSliceOf(t *testing.T, js jetstream.JetStream, service string, ok func(events.Slice) bool) events.Slice {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		rec, err := events.LastStatus(t.Context(), js, vmRef, service)
		if err == nil && ok(rec.Slice) {
			return rec.Slice
		}
		if time.Now().After(deadline) {
			t.Fatalf("no matching slice before the deadline (last: %+v, err %v)", rec.Slice, err)
		}
		time.Sleep(10 * time.Millisecond) // poll interval of a deadline-bounded wait
	}
}

// A service that released a deleting object is done with it: a later change reconciles
// nothing, while an object it has not released yet is still reconciled.
func TestReleasedObjectIsNotReconciledAgain(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ctx := t.Context()
	if err := events.Setup(ctx, js); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	release := atomic.Bool{}
	tr := reconcile.NewTrigger(js, reconcile.Config{Service: "placement", Plural: "virtualmachines"},
		func(_ context.Context, o reconcile.Object) (reconcile.Result, error) {
			calls.Add(1)
			return reconcile.Result{Status: map[string]any{"seen": o.Meta.Generation}, Released: o.Deleting() && release.Load()}, nil
		})
	reconcileNow := func() int32 {
		tr.Request(ctx, vmRef)
		tr.Wait()
		return calls.Load()
	}
	deleting := func(annotation string) string {
		return `{"metadata":{"uid":"u1","generation":2,"deletionTimestamp":"2026-11-22T00:00:00Z","annotations":{"a":"` + annotation + `"}}}`
	}
	seq, err := events.AppendSpec(ctx, js, vmRef, events.OpPut, []byte(deleting("1")), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := reconcileNow(); n != 1 {
		t.Fatalf("%d reconciles of the deleting object, want 1", n)
	}
	if n := reconcileNow(); n != 2 {
		t.Fatalf("%d reconciles of the deleting object not released yet, want 2", n)
	}
	release.Store(true)
	if n := reconcileNow(); n != 3 {
		t.Fatalf("%d reconciles, want the third to release", n)
	}
	waitSlice(t, js, func(s events.Slice) bool { return s.Released })
	if _, err := events.AppendSpec(ctx, js, vmRef, events.OpPut, []byte(deleting("2")), seq, nil); err != nil {
		t.Fatal(err)
	}
	if n := reconcileNow(); n != 3 {
		t.Errorf("%d reconciles after the release and an edit, want still 3", n)
	}
}

// A loop stopped as it starts (its service stopped at once) is stopped, not failed: Run
// returns nil, whether the stop came before it set the streams up or while it set its
// consumers up.
func TestRunStoppedAsItStartsReturnsNil(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	cfg := reconcile.Config{Service: "placement", Plural: "virtualmachines", Inputs: []string{"power"}, Related: []string{"storageclasses"}}
	f := func(context.Context, reconcile.Object) (reconcile.Result, error) { return reconcile.Result{}, nil }
	stopped, cancel := context.WithCancel(t.Context())
	cancel()
	if err := reconcile.Run(stopped, js, cfg, f); err != nil {
		t.Errorf("Run stopped before it began: %v, want nil", err)
	}
	for range 20 { // the stop lands somewhere in the setting up
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- reconcile.Run(ctx, js, cfg, f) }()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run stopped as it started: %v, want nil", err)
		}
	}
}
