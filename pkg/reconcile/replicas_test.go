package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/reconcile"
)

// Two replicas of a service on a 3-node cluster (R3 streams) reconcile the same objects,
// woken by their specs (one shared consumer) and by both replicas' triggers at once: no
// object is ever reconciled by both at the same time, and each reconcile reads the slice
// the one before it published (a count every reconcile raises by one: two reconciles
// reading the same count would be two acting on one state).
func TestReplicasReconcileEachObjectOneAtATime(t *testing.T) {
	cluster := eventstest.StartCluster(t, 3)
	admin, _ := cluster.Connect(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	if err := events.Setup(ctx, admin, events.WithReplicas(3)); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	active := map[string]int{}        // object → reconciles running now, over both replicas
	seen := map[string]map[int]bool{} // object → counts reconciles read
	calls := map[string]int{}
	var overlaps, rereads int
	var byReplica [2]int
	f := func(replica int, o reconcile.Object) (reconcile.Result, error) {
		var prev struct{ Count int }
		if s, ok := o.Slices["power"]; ok {
			_ = json.Unmarshal(s.Status, &prev)
		}
		key := o.Ref.Name
		mu.Lock()
		active[key]++
		if active[key] > 1 {
			overlaps++
		}
		if seen[key] == nil {
			seen[key] = map[int]bool{}
		}
		if seen[key][prev.Count] {
			rereads++
		}
		seen[key][prev.Count] = true
		calls[key]++
		byReplica[replica]++
		mu.Unlock()
		time.Sleep(2 * time.Millisecond) // the work a reconcile does in vCenter
		mu.Lock()
		active[key]--
		mu.Unlock()
		return reconcile.Result{Status: map[string]int{"count": prev.Count + 1}}, nil
	}
	cfg := reconcile.Config{Service: "power", Plural: "virtualmachines", Workers: 4}
	var triggers []*reconcile.Trigger
	var wg sync.WaitGroup
	runCtx, stop := context.WithCancel(ctx)
	for replica := range 2 {
		js, _ := cluster.Connect(t)
		tr := reconcile.NewTrigger(js, cfg, func(_ context.Context, o reconcile.Object) (reconcile.Result, error) {
			return f(replica, o)
		})
		triggers = append(triggers, tr)
		wg.Go(func() {
			if err := tr.Run(runCtx); err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	defer func() {
		stop()
		wg.Wait()
	}()

	const objects = 20
	refs := make([]events.Ref, objects)
	for i := range objects {
		refs[i] = events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: fmt.Sprintf("vm-%02d", i)}
		body := fmt.Appendf(nil, `{"metadata":{"uid":"u%d","generation":1}}`, i)
		if _, err := events.AppendSpec(ctx, admin, refs[i], events.OpPut, body, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		for _, tr := range triggers {
			if err := tr.RequestAll(runCtx); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tr := range triggers {
		tr.Wait()
	}

	// Every reconcile's slice landed: each object's count is the number of its reconciles.
	deadline := time.Now().Add(time.Minute)
	for i := 0; i < objects; {
		rec, err := events.LastStatus(ctx, admin, refs[i], "power")
		var got struct{ Count int }
		if err == nil {
			_ = json.Unmarshal(rec.Slice.Status, &got)
		}
		mu.Lock()
		want := calls[refs[i].Name]
		mu.Unlock()
		if err == nil && got.Count == want && want > 0 {
			i++
			continue
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: count %d after %d reconciles (err %v)", refs[i].Name, got.Count, want, err)
		}
		time.Sleep(20 * time.Millisecond) // poll interval of a deadline-bounded wait
	}
	mu.Lock()
	defer mu.Unlock()
	total := 0
	for _, n := range calls {
		total += n
	}
	if overlaps != 0 || rereads != 0 {
		t.Errorf("%d reconciles overlapped another of the same object, %d read a count already read (of %d)", overlaps, rereads, total)
	}
	if byReplica[0] == 0 || byReplica[1] == 0 {
		t.Errorf("reconciles by replica: %v; want both to work", byReplica)
	}
	t.Logf("%d reconciles of %d objects, %v by each replica", total, objects, byReplica)
}
