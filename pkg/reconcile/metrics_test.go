package reconcile_test

import (
	"context"
	"errors"
	"maps"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/reconcile"
)

// Reconciles are counted by service, kind and result, timed, and the loop's queue depth
// and consumer lag are sampled; each reconcile once, also in a loop a Trigger runs.
func TestMetricsCountReconciles(t *testing.T) {
	t.Run("Run", func(t *testing.T) {
		testMetricsCountReconciles(t, func(ctx context.Context, js jetstream.JetStream, cfg reconcile.Config, f reconcile.Func) error {
			return reconcile.Run(ctx, js, cfg, f)
		})
	})
	t.Run("Trigger", func(t *testing.T) {
		testMetricsCountReconciles(t, func(ctx context.Context, js jetstream.JetStream, cfg reconcile.Config, f reconcile.Func) error {
			return reconcile.NewTrigger(js, cfg, f).Run(ctx)
		})
	})
}

func testMetricsCountReconciles(t *testing.T, run func(context.Context, jetstream.JetStream, reconcile.Config, reconcile.Func) error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(reconcile.Collectors()...)
	js, _ := eventstest.JetStream(t)
	ctx := t.Context()
	var calls atomic.Int32
	runUntilCleanup(t, ctx, func(ctx context.Context) error {
		return run(ctx, js, reconcile.Config{Service: "placement", Plural: "virtualmachines"},
			func(_ context.Context, o reconcile.Object) (reconcile.Result, error) {
				if calls.Add(1) == 1 {
					return reconcile.Result{}, errors.New("vCenter said no")
				}
				return reconcile.Result{Status: map[string]any{"seen": o.Meta.Generation}}, nil
			})
	})
	before := reconciled(t, reg) // the package's counters also hold other tests' reconciles
	if _, err := events.AppendSpec(ctx, js, vmRef, events.OpPut, []byte(`{"metadata":{"uid":"u1","generation":1}}`), 0, nil); err != nil {
		t.Fatal(err)
	}
	waitSlice(t, js, func(s events.Slice) bool { return s.Generation == 1 })
	deadline := time.Now().Add(30 * time.Second)
	// The sample at start may come before the consumer exists: the next one sees it.
	for got := reconciled(t, reg); got["queue_depth"] == 0 || got["consumer_pending"] == 0; got = reconciled(t, reg) {
		if time.Now().After(deadline) {
			t.Fatalf("consumer lag and queue depth not sampled: %v", got)
		}
		time.Sleep(50 * time.Millisecond) // poll interval of a condition with a deadline
	}
	got := reconciled(t, reg)
	for k, v := range before {
		got[k] -= v
	}
	delete(got, "queue_depth")
	delete(got, "consumer_pending")
	if want := map[string]float64{"error": 1, "success": 1, "timed": 2}; !maps.Equal(got, want) {
		t.Errorf("reconciles counted %v, want %v", got, want)
	}
}

// reconciled is placement's reconciles of VMs counted by result, how many were timed,
// and whether its queue depth and consumer lag were sampled.
func reconciled(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	got := map[string]float64{}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["service"] != "placement" {
				continue
			}
			switch f.GetName() {
			case "vmop_consumer_pending":
				got["consumer_pending"] = 1 // sampled
			}
			if labels["kind"] != "virtualmachines" {
				continue
			}
			switch f.GetName() {
			case "vmop_reconcile_queue_depth":
				got["queue_depth"] = 1 // sampled
			case "vmop_reconciles_total":
				got[labels["result"]] = m.GetCounter().GetValue()
			case "vmop_reconcile_duration_seconds":
				got["timed"] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return got
}
