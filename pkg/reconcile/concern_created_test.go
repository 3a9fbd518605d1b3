package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// A service that reads placement's and storage's slices only once placement created the
// VM (UnreadUntilCreated) is not called for their changes before: not for placement's
// progress, nor for storage's slice; placement's report of the VM created calls it, and
// from then on storage's changes do.
func TestConcernReadsNoInputUntilTheVMIsCreated(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ctx := t.Context()
	var calls atomic.Int32
	cfg := reconcile.Config{Service: model.ServiceNetwork, Plural: "virtualmachines",
		Inputs: []string{model.ServicePlacement, model.ServiceStorage},
		Concern: func(o reconcile.Object) reconcile.Ignored {
			var ign reconcile.Ignored
			ign.UnreadUntilCreated(o, model.ServicePlacement, model.ServiceStorage)
			return ign
		}}
	runLoop(t, ctx, js, cfg, func(_ context.Context, o reconcile.Object) (reconcile.Result, error) {
		n := calls.Add(1)
		_, created := reconcile.Placed(o)
		return reconcile.Result{Status: map[string]any{"created": created, "call": n}}, nil
	})
	publish := func(service, status string) {
		t.Helper()
		slice := events.Slice{Service: service, UID: "u1", Generation: 1, Status: json.RawMessage(status)}
		if _, err := events.PublishStatus(ctx, js, vmRef, slice); err != nil {
			t.Fatal(err)
		}
		waitConsumed(t, js, events.StreamStatus, events.Durable(model.ServiceNetwork+"-inputs"))
	}
	placement := func(created, message string) string {
		return fmt.Sprintf(`{"conditions":[{"type":%q,"status":%q,"message":%q}]}`, model.ConditionCreated, created, message)
	}
	if _, err := events.AppendSpec(ctx, js, vmRef, events.OpPut, vmRecord(1, 1, ""), 0, nil); err != nil {
		t.Fatal(err)
	}
	waitNetworkSlice(t, js, 1)

	publish(model.ServicePlacement, placement("False", "placing"))
	publish(model.ServiceStorage, `{"ready":false}`)
	publish(model.ServicePlacement, placement("False", "creating in zone-a"))
	if n := calls.Load(); n != 1 {
		t.Errorf("%d calls before the VM is created, want 1 (the spec's)", n)
	}
	publish(model.ServicePlacement, placement("True", ""))
	waitNetworkSlice(t, js, 2)
	publish(model.ServiceStorage, `{"ready":true}`)
	waitNetworkSlice(t, js, 3)
}

// waitNetworkSlice waits until the network service's slice reports its call n.
func waitNetworkSlice(t *testing.T, js jetstream.JetStream, n int) {
	t.Helper()
	waitSliceOf(t, js, model.ServiceNetwork, func(s events.Slice) bool {
		var st struct{ Call int }
		return json.Unmarshal(s.Status, &st) == nil && st.Call == n
	})
}
