package reconcile

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// Two replicas (two connections to one NATS), four callers each, hold one scope over and
// over: f never runs for it twice at once, in one process or across both. A caller of
// another scope is not held up meanwhile.
func TestScopeIsHeldByOneCallerAcrossReplicas(t *testing.T) {
	s := eventstest.Server(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var active, most, runs atomic.Int32
	var wg sync.WaitGroup
	for range 2 {
		js, _ := eventstest.Connect(t, s)
		for range 4 {
			wg.Go(func() {
				for range 5 {
					err := HoldScope(ctx, js, "placement", "namespaces", "ns1", func(context.Context) error {
						n := active.Add(1)
						for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
						}
						time.Sleep(2 * time.Millisecond) // a decision's reads and writes
						active.Add(-1)
						runs.Add(1)
						return nil
					})
					if err != nil {
						t.Errorf("HoldScope: %v", err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	if most.Load() != 1 || runs.Load() != 40 {
		t.Errorf("%d runs, at most %d at once; want 40, one at a time", runs.Load(), most.Load())
	}

	// While one replica holds ns1, the other holds ns2.
	a, _ := eventstest.Connect(t, s)
	b, _ := eventstest.Connect(t, s)
	held, free := make(chan struct{}), make(chan struct{})
	go func() {
		_ = HoldScope(ctx, a, "placement", "namespaces", "ns1", func(context.Context) error {
			close(held)
			<-free
			return nil
		})
	}()
	<-held
	err := HoldScope(ctx, b, "placement", "namespaces", "ns2", func(context.Context) error { return nil })
	close(free)
	if err != nil {
		t.Errorf("HoldScope of another scope while ns1 is held: %v", err)
	}
}

// A replica that dies holding a scope (its connection closed: no renewal, no release)
// keeps it from the other one until the lease expires, LeaseTTL after its last renewal;
// the dead holder's f sees its lease lost.
func TestDeadHoldersScopeIsTakenOverAfterTTL(t *testing.T) {
	s := eventstest.Server(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	dead, deadConn := eventstest.Connect(t, s)
	live, _ := eventstest.Connect(t, s)
	held := make(chan struct{})
	lostCause := make(chan error, 1)
	deadErr := make(chan error, 1)
	go func() {
		deadErr <- HoldScope(ctx, dead, "storage", "volumes", "vol-1", func(ctx context.Context) error {
			close(held)
			<-ctx.Done()
			lostCause <- context.Cause(ctx)
			return nil
		})
	}()
	<-held
	deadConn.Close()
	died := time.Now()

	var took time.Duration
	err := HoldScope(ctx, live, "storage", "volumes", "vol-1", func(context.Context) error {
		took = time.Since(died)
		return nil
	})
	if err != nil {
		t.Fatalf("HoldScope after the holder died: %v", err)
	}
	// The dead holder's last renewal was at most a renewal interval before it died.
	if least := events.LeaseTTL - events.LeaseTTL/3 - time.Second; took < least || took > events.LeaseTTL+5*time.Second {
		t.Errorf("scope taken over %v after its holder died; want between %v and %v", took, least, events.LeaseTTL+5*time.Second)
	}
	if cause := <-lostCause; !errors.Is(cause, errScopeLost) {
		t.Errorf("the dead holder's f ended with %v; want %v", cause, errScopeLost)
	}
	if err := <-deadErr; !errors.Is(err, errScopeLost) {
		t.Errorf("the dead holder's HoldScope returned %v; want %v", err, errScopeLost)
	}
}
