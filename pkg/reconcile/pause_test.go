package reconcile_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// A paused object is handed to no service's Func: every slice stays as it was (the
// reporting service's says who paused it in ReconcileReady, still about the generation it
// reconciled), and unpausing reconciles the latest spec once.
func TestPausedObjectIsNotReconciled(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ctx := t.Context()
	if err := events.Setup(ctx, js); err != nil {
		t.Fatal(err)
	}
	var calls [2]atomic.Int32
	service := func(i int, name string, reports bool) *reconcile.Trigger {
		return reconcile.NewTrigger(js, reconcile.Config{Service: name, Plural: "virtualmachines", ReportsPause: reports},
			func(_ context.Context, o reconcile.Object) (reconcile.Result, error) {
				calls[i].Add(1)
				return reconcile.Result{Status: map[string]any{"seen": o.Meta.Generation}}, nil
			})
	}
	services := []*reconcile.Trigger{service(0, "placement", true), service(1, "power", false)}
	var seq uint64
	put := func(body string) {
		t.Helper()
		var err error
		if seq, err = events.AppendSpec(ctx, js, vmRef, events.OpPut, []byte(body), seq, nil); err != nil {
			t.Fatal(err)
		}
		for _, s := range services {
			s.Request(ctx, vmRef)
			s.Wait()
		}
	}
	last := func(service string) (events.Slice, uint64) {
		t.Helper()
		rec, err := events.LastStatus(ctx, js, vmRef, service)
		if err != nil {
			t.Fatal(err)
		}
		return rec.Slice, rec.Seq
	}
	ready := func() metav1.Condition {
		t.Helper()
		s, _ := last("placement")
		conds, err := reconcile.SliceConditions(s)
		if err != nil {
			t.Fatal(err)
		}
		c := reconcile.FindCondition(conds, model.ConditionReconcileReady)
		if c == nil {
			t.Fatalf("placement's slice %s has no ReconcileReady", s.Status)
		}
		return *c
	}
	wantCalls := func(n int32) {
		t.Helper()
		for i := range calls {
			if got := calls[i].Load(); got != n {
				t.Fatalf("service %d reconciled %d times, want %d", i, got, n)
			}
		}
	}

	put(`{"metadata":{"uid":"u1","generation":1,"labels":{"vmoperator.vmware.com/paused":"devops"}}}`)
	wantCalls(1) // the label alone only records who paused
	_, powerSeq := last("power")

	for _, tc := range []struct{ meta, by string }{
		{`"annotations":{"vmoperator.vmware.com/paused":""}`, "DevOps"},
		{`"labels":{"vmoperator.vmware.com/paused":"admin"}`, "Admin"},
		{`"annotations":{"vmoperator.vmware.com/paused":"x"},"labels":{"vmoperator.vmware.com/paused":"both"}`, "Admin, DevOps"},
	} {
		put(`{"metadata":{"uid":"u1","generation":2,` + tc.meta + `}}`)
		wantCalls(1)
		c := ready()
		if c.Status != metav1.ConditionFalse || c.Reason != model.ReasonReconcilePaused ||
			c.Message != "Virtual Machine reconciliation paused by "+tc.by || c.ObservedGeneration != 2 {
			t.Errorf("ReconcileReady paused by %s = %+v", tc.by, c)
		}
		if s, _ := last("placement"); s.Generation != 1 || !strings.Contains(string(s.Status), `"seen":1`) {
			t.Errorf("placement's slice while paused = generation %d %s, want generation 1's", s.Generation, s.Status)
		}
		if _, n := last("power"); n != powerSeq {
			t.Errorf("power published about the paused object (seq %d, was %d)", n, powerSeq)
		}
	}

	put(`{"metadata":{"uid":"u1","generation":2}}`)
	wantCalls(2) // the Func's slice replaces the paused one (a real reporter says True)
	for _, svc := range []string{"placement", "power"} {
		if s, _ := last(svc); s.Generation != 2 || string(s.Status) != `{"seen":2}` {
			t.Errorf("%s's slice after unpausing = generation %d %s, want generation 2's", svc, s.Generation, s.Status)
		}
	}
}
