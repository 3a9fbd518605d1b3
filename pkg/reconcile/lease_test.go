package reconcile_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/reconcile"
)

// A lease request the server leaves unanswered (a clustered one drops some while a group
// elects its leader, e.g. a bucket's info just after another replica created it) is asked
// again after the JetStream timeout: the reconcile is not held for its caller's whole
// deadline. Here a gateway in front of JetStream loses the first request for the lease
// bucket's info and the first lease create.
func TestLostLeaseRequestsAreAskedAgain(t *testing.T) {
	s := eventstest.Server(t)
	admin, _ := eventstest.Connect(t, s)
	if err := events.Setup(t.Context(), admin); err != nil {
		t.Fatal(err)
	}
	bucket := events.LeaseBucket("placement")
	var lostInfo, lostCreate atomic.Bool
	js := eventstest.Lossy(t, s, 2*time.Second, func(subject string, _ *nats.Msg, _ *string) bool {
		switch {
		case subject == "$JS.API.STREAM.INFO.KV_"+bucket && lostInfo.CompareAndSwap(false, true):
			return true
		case strings.HasPrefix(subject, "$KV."+bucket+".") && lostCreate.CompareAndSwap(false, true):
			return true
		}
		return false
	})
	reconcileOnce(t, js, admin)
	if !lostInfo.Load() || !lostCreate.Load() {
		t.Errorf("lost the bucket's info: %v, the lease create: %v; want both lost once", lostInfo.Load(), lostCreate.Load())
	}
}

// A lease create that lands but whose answer is lost leaves the key naming this replica;
// the create asked again meets it, and the replica reclaims it at its revision instead of
// polling until it expires: two creates reach the bucket before the reclaiming update.
func TestLeaseCreateAnsweredNeverIsReclaimed(t *testing.T) {
	s := eventstest.Server(t)
	admin, _ := eventstest.Connect(t, s)
	if err := events.Setup(t.Context(), admin); err != nil {
		t.Fatal(err)
	}
	bucket := events.LeaseBucket("placement")
	var answerLost atomic.Bool
	var creates, createsAtUpdate atomic.Int32
	js := eventstest.Lossy(t, s, time.Second, func(subject string, m *nats.Msg, reply *string) bool {
		if strings.HasPrefix(subject, "$KV."+bucket+".") {
			if m.Header.Get(jetstream.ExpectedLastSubjSeqHeader) == "0" {
				creates.Add(1)
				if answerLost.CompareAndSwap(false, true) {
					*reply = "" // the create lands; its answer goes nowhere
				}
			} else if creates.Load() > 0 {
				createsAtUpdate.CompareAndSwap(0, creates.Load())
			}
		}
		return false
	})
	reconcileOnce(t, js, admin)
	if !answerLost.Load() || createsAtUpdate.Load() != 2 {
		t.Errorf("answer lost %v, %d creates before the first update; want the lost create and one more meeting it, then the reclaiming update",
			answerLost.Load(), createsAtUpdate.Load())
	}
}

// reconcileOnce runs placement's loop on js until the test ends, appends one VM through
// admin and waits for the loop's slice of it. The loop's deadline is far beyond
// waitSlice's: nats.go would wait it out for a lost request.
func reconcileOnce(t *testing.T, js, admin jetstream.JetStream) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	t.Cleanup(cancel)
	runLoop(t, ctx, js, reconcile.Config{Service: "placement", Plural: "virtualmachines"},
		func(_ context.Context, o reconcile.Object) (reconcile.Result, error) {
			return reconcile.Result{Status: map[string]any{"seen": o.Meta.Generation}}, nil
		})
	if _, err := events.AppendSpec(ctx, admin, vmRef, events.OpPut, []byte(`{"metadata":{"uid":"u1","generation":1}}`), 0, nil); err != nil {
		t.Fatal(err)
	}
	waitSlice(t, admin, func(s events.Slice) bool { return s.Generation == 1 })
}

// A reconcile of an object whose lease this replica freed last takes it back at the free
// value's revision: two requests to the lease bucket a reconcile, the take and the
// release, and the key is left free (empty), not deleted.
func TestLeaseTakenBackAtItsFreeRevision(t *testing.T) {
	s := eventstest.Server(t)
	admin, _ := eventstest.Connect(t, s)
	if err := events.Setup(t.Context(), admin); err != nil {
		t.Fatal(err)
	}
	bucket := events.LeaseBucket("placement")
	var requests atomic.Int32
	js := eventstest.Lossy(t, s, 5*time.Second, func(subject string, _ *nats.Msg, _ *string) bool {
		if strings.HasPrefix(subject, "$KV."+bucket+".") || strings.HasSuffix(subject, ".KV_"+bucket) ||
			strings.Contains(subject, ".KV_"+bucket+".") {
			requests.Add(1)
		}
		return false
	})
	reconcileOnce(t, js, admin)
	kv, err := events.Leases(t.Context(), admin, "placement")
	if err != nil {
		t.Fatal(err)
	}
	key := events.LeaseKey(vmRef)
	first := freeLeaseRevision(t, kv, key)
	before := requests.Load()
	rec, err := events.LastSpec(t.Context(), admin, vmRef)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := events.AppendSpec(t.Context(), admin, vmRef, events.OpPut, []byte(`{"metadata":{"uid":"u1","generation":2}}`), rec.Seq, nil); err != nil {
		t.Fatal(err)
	}
	waitSlice(t, admin, func(s events.Slice) bool { return s.Generation == 2 })
	if again := freeLeaseRevision(t, kv, key); again <= first {
		t.Fatalf("lease revision %d after the second reconcile, want past %d", again, first)
	}
	if n := requests.Load() - before; n != 2 {
		t.Errorf("%d requests to the lease bucket for the second reconcile, want 2 (take, release)", n)
	}
}

// A replica that stops while a reconcile works (a vCenter task it started may still run)
// leaves the object's lease to expire rather than freeing it, as a crashed one does: the
// next reconcile, even one of the same process, reads the object only after that work had
// the lease's TTL to land.
func TestStoppedReconcileLeavesTheLeaseToExpire(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	cfg := reconcile.Config{Service: "placement", Plural: "virtualmachines"}
	var landed atomic.Bool
	working := make(chan struct{})
	ctx, stop := context.WithCancel(t.Context())
	stopped := make(chan error, 1)
	go func() {
		stopped <- reconcile.Run(ctx, js, cfg, func(ctx context.Context, _ reconcile.Object) (reconcile.Result, error) {
			close(working)
			<-ctx.Done()
			// What it started lands a second after the stop, as a slow vCenter task does.
			time.AfterFunc(time.Second, func() { landed.Store(true) })
			return reconcile.Result{}, ctx.Err()
		})
	}()
	seq, err := events.AppendSpec(t.Context(), js, vmRef, events.OpPut, []byte(`{"metadata":{"uid":"u1","generation":1}}`), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-working:
	case <-time.After(10 * time.Second):
		t.Fatal("no reconcile")
	}
	stop()
	if err := <-stopped; err != nil {
		t.Fatalf("Run: %v", err)
	}

	var readEarly atomic.Bool
	runLoop(t, t.Context(), js, cfg, func(context.Context, reconcile.Object) (reconcile.Result, error) {
		if !landed.Load() {
			readEarly.Store(true)
		}
		return reconcile.Result{Status: map[string]bool{"done": true}}, nil
	})
	// A new record, so that the next reconcile does not hang on the stopped consumer's
	// message coming back (at once when its negative ack made it out, else after AckWait).
	if _, err := events.AppendSpec(t.Context(), js, vmRef, events.OpPut, []byte(`{"metadata":{"uid":"u1","generation":2}}`), seq, nil); err != nil {
		t.Fatal(err)
	}
	// The lease expires LeaseTTL after the stopped holder's last write.
	deadline := time.Now().Add(3 * events.LeaseTTL)
	for {
		if s, err := events.LastStatus(t.Context(), js, vmRef, "placement"); err == nil && s.Slice.Generation == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no slice after the lease expired")
		}
		time.Sleep(10 * time.Millisecond) // poll interval of a deadline-bounded wait
	}
	if readEarly.Load() {
		t.Error("the next reconcile read the object before the stopped reconcile's work landed")
	}
}
