package reconcile_test

import (
	"context"
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
	ctx, cancel := context.WithCancel(t.Context())
	seen := make(chan reconcile.Object, 100)
	done := make(chan error, 1)
	go func() {
		done <- reconcile.Run(ctx, js, reconcile.Config{
			Service: "power", Plural: "virtualmachines",
			Inputs: []string{"placement"}, Related: []string{"virtualmachineclasses"},
		}, func(_ context.Context, o reconcile.Object) (reconcile.Result, error) {
			seen <- o
			return reconcile.Result{}, nil
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
	waitFor(t, seen, "the spec", func(o reconcile.Object) bool { return o.Meta.UID == "u1" })

	if _, err := events.PublishStatus(ctx, js, vmRef, events.Slice{Service: "placement", UID: "u1", Generation: 1, Status: []byte(`{"uniqueID":"vm-1"}`)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, seen, "placement's slice", func(o reconcile.Object) bool {
		return string(o.Slices["placement"].Status) == `{"uniqueID":"vm-1"}`
	})

	class := events.Ref{Plural: "virtualmachineclasses", Namespace: "ns", Name: "small"}
	if _, err := events.AppendSpec(ctx, js, class, events.OpPut, []byte(`{"metadata":{"uid":"c1"}}`), 0, nil); err != nil {
		t.Fatal(err)
	}
	drain(seen)
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
