package reconcile

import (
	"context"
	"errors"
	"testing"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// A reconcile whose object's lease was lost (its renewals failed for LeaseTTL: another
// replica may hold it now) does not act: call refuses before the Func runs (a reconcile
// that joined the lost lease), and so does Trigger's Run once it gets the object's lock
// from a requested reconcile that held it while the lease was lost.
func TestLostLeaseActsNoMore(t *testing.T) {
	ref := events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: "lost"}
	cfg := Config{Service: "power", Plural: "virtualmachines"}
	holding := func() (context.Context, context.CancelFunc) {
		lost, lose := context.WithCancel(context.Background())
		return context.WithValue(t.Context(), heldLeaseKey{}, heldLease{ref: ref, lost: lost}), lose
	}
	var acted bool
	f := func(context.Context, Object) (Result, error) {
		acted = true
		return Result{}, nil
	}

	ctx, lose := holding()
	lose()
	if _, err := call(ctx, cfg, f, Object{Ref: ref}); !errors.Is(err, errLeaseLost) || acted {
		t.Errorf("call with the lease lost: %v, acted %v; want %v and no act", err, acted, errLeaseLost)
	}

	acted = false
	js, _ := eventstest.JetStream(t)
	tr := NewTrigger(js, cfg, f)
	unlock := tr.locks.Lock(events.SpecSubject(ref)) // a requested reconcile holds the object
	ctx, lose = holding()
	done := make(chan error, 1)
	go func() {
		_, err := tr.locked()(ctx, Object{Ref: ref})
		done <- err
	}()
	lose() // while Run waits for the lock
	unlock()
	if err := <-done; !errors.Is(err, errLeaseLost) || acted {
		t.Errorf("Run's reconcile after the lease was lost: %v, acted %v; want %v and no act", err, acted, errLeaseLost)
	}
}

// A reconcile of Run that read a deleting object and waited for its lock while a requested
// reconcile released the object (finished the service's deletion work) does nothing more:
// a released object is not reconciled again.
func TestRunDoesNotReconcileWhatARequestReleased(t *testing.T) {
	ref := events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: "released"}
	cfg := Config{Service: "power", Plural: "virtualmachines"}
	js, _ := eventstest.JetStream(t)
	body := []byte(`{"metadata":{"uid":"u1","generation":2,"deletionTimestamp":"2026-11-27T00:00:00Z"}}`)
	if _, err := events.AppendSpec(t.Context(), js, ref, events.OpPut, body, 0, nil); err != nil {
		t.Fatal(err)
	}
	acted := false
	tr := NewTrigger(js, cfg, func(context.Context, Object) (Result, error) {
		acted = true
		return Result{Released: true}, nil
	})
	read := Object{Ref: ref, Meta: Meta{UID: "u1", Generation: 2, DeletionTimestamp: "2026-11-27T00:00:00Z"}}
	// The requested reconcile, after Run read the object: it published the release.
	if _, err := events.PublishStatus(t.Context(), js, ref, events.Slice{Service: cfg.Service, UID: "u1", Generation: 2, Released: true}); err != nil {
		t.Fatal(err)
	}
	tr.mu.Lock()
	tr.release(events.SpecSubject(ref))
	tr.mu.Unlock()
	if _, err := tr.locked()(t.Context(), read); err != nil || acted {
		t.Errorf("Run's reconcile of the released object: %v, acted %v; want nothing done", err, acted)
	}
}
