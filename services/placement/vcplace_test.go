package placement

import (
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/vmop/vmop/pkg/model"
)

// A VM free to go to any zone is placed by vCenter: PlaceVmsXCluster across the zones'
// clusters, then PlaceVm in the chosen cluster, both in the trace of the reconcile.
func TestPlacementAsksVCenter(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	r := h.newTestReconciler()

	v := newTestVM("asked-vm")
	ctx, root := otel.Tracer("test").Start(h.ctx, "test reconcile")
	h.putVM(v, false)
	res, err := r.reconcile(ctx, h.object(v.ref))
	root.End()
	if err != nil {
		t.Fatal(err)
	}
	st := statusOf(t, res)
	if !isTrue(st, model.ConditionCreated) || st.Zone == "" {
		t.Fatalf("zone %q, Created %+v", st.Zone, condition(st, model.ConditionCreated))
	}
	var names []string
	deadline := time.Now().Add(waitFor)
	for !slices.Contains(names, spanPlaceVM) {
		if time.Now().After(deadline) {
			t.Fatalf("spans of the reconcile: %v; want %s and %s", names, spanPlaceXCluster, spanPlaceVM)
		}
		time.Sleep(pollEvery)
		names = names[:0]
		for _, s := range spans.Ended() {
			if s.SpanContext().TraceID() == root.SpanContext().TraceID() && s.SpanKind() == trace.SpanKindClient {
				names = append(names, s.Name())
			}
		}
	}
	if !slices.Contains(names, spanPlaceXCluster) || slices.Index(names, spanPlaceXCluster) > slices.Index(names, spanPlaceVM) {
		t.Errorf("spans %v: want %s before %s", names, spanPlaceXCluster, spanPlaceVM)
	}
}
