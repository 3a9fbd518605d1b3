package reconcile_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/reconcile"
)

// A reconcile that panics is a failed reconcile: the message is retried, the loop (and
// the process) goes on, and the retry publishes the slice.
func TestPanickingReconcileIsRetried(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ctx, cancel := context.WithCancel(t.Context())
	var calls atomic.Int32
	done := make(chan error, 1)
	go func() {
		done <- reconcile.Run(ctx, js, reconcile.Config{Service: "placement", Plural: "virtualmachines"},
			func(_ context.Context, o reconcile.Object) (reconcile.Result, error) {
				if calls.Add(1) == 1 {
					var m map[string]int
					m["boom"]++ // a bug: nil map
				}
				return reconcile.Result{Status: map[string]any{"seen": o.Meta.Generation}}, nil
			})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	if _, err := events.AppendSpec(ctx, js, vmRef, events.OpPut, []byte(`{"metadata":{"uid":"u1","generation":1}}`), 0, nil); err != nil {
		t.Fatal(err)
	}
	waitSlice(t, js, func(s events.Slice) bool { return s.Generation == 1 })
	if n := calls.Load(); n < 2 {
		t.Errorf("reconciled %d times, want the panic and a retry", n)
	}
	select {
	case err := <-done:
		t.Fatalf("Run stopped after the panic: %v", err)
	default:
	}
}
