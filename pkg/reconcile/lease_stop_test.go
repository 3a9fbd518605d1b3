package reconcile

import (
	"context"
	"testing"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// Work that succeeded frees its lease though the replica stopped before it returned:
// nothing it started runs on (a reconcile that published its slice, cancelled on its way
// out). Work that failed once stopped leaves its lease to expire.
func TestLeaseOfWorkDoneAtTheStopIsFreed(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	s := leasesOf(js, "power")
	for _, tc := range []struct {
		name string
		err  error
		left bool
	}{
		{"succeeded", nil, false},
		{"failed", context.Canceled, true},
	} {
		ref := events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: tc.name}
		ctx, stop := context.WithCancel(t.Context())
		_ = s.hold(ctx, ref, func(context.Context, uint64) error {
			stop() // the replica stops as the work ends
			return tc.err
		})
		key := events.LeaseKey(ref)
		if left := s.leftToExpire(key); left != tc.left {
			t.Errorf("%s: lease left to expire %v, want %v", tc.name, left, tc.left)
		}
		if _, freed := s.freedAt(key); freed == tc.left {
			t.Errorf("%s: lease freed %v, want %v", tc.name, freed, !tc.left)
		}
	}
}

// A lease two reconciles of the process share is left to expire when the first one's work
// failed at the stop, though the second, released last, succeeded: the first's cancelled
// vCenter task may still be running.
func TestLeaseOfWorkFailedAtTheStopIsLeftThoughAnotherUserSucceeded(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	s := leasesOf(js, "power")
	key := events.LeaseKey(events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: "shared"})
	first, _, err := s.acquire(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	second, _, err := s.acquire(t.Context(), key)
	if err != nil || second != first {
		t.Fatalf("second user: %v (same lease: %v)", err, second == first)
	}
	s.release(true, key, first)
	s.release(false, key, second)
	if !s.leftToExpire(key) {
		t.Error("lease not left to expire")
	}
	if _, freed := s.freedAt(key); freed {
		t.Error("lease freed")
	}
}

// A reconcile that joined a lease and gave up waiting (its ctx ended) after the lease's
// holder released it is the last user: it frees the lease, which would otherwise be renewed
// for good, kept from every other replica.
func TestLeaseJoinedAndGivenUpLastIsFreed(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	s := leasesOf(js, "power")
	key := events.LeaseKey(events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: "joined"})
	holder, _, err := s.acquire(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	joiner, _, err := s.acquire(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	s.release(false, key, holder) // the joiner still counts: the holder leaves the freeing to it
	if _, freed := s.freedAt(key); freed {
		t.Fatal("lease freed while a user still counted")
	}
	s.giveUp(key, joiner)
	if _, freed := s.freedAt(key); !freed {
		t.Error("lease not freed by its last user")
	}
	select {
	case <-joiner.done:
	default:
		t.Error("the lease is still renewed")
	}
}
