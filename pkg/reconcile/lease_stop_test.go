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
