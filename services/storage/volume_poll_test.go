package storage

import (
	"testing"
	"time"

	"github.com/vmop/vmop/pkg/events"
)

// While a VM waits on a claim (an expansion pending, a class that forbids it, a refused
// extend; a claim not found, maybe only not seen yet), it is looked at again after a
// second, then twice as long each time up to a minute, not every second for good; once it
// waits no more the waits start over.
func TestClaimWaitsArePolledLessAndLess(t *testing.T) {
	var waits []time.Duration
	a := &attacher{later: func(_ events.Ref, at time.Time) { waits = append(waits, time.Until(at).Round(time.Second)) }}
	ref := events.Ref{Plural: "virtualmachines", Namespace: "my-namespace", Name: "growing"}
	for range 8 {
		a.pollClaims(ref, true)
	}
	a.pollClaims(ref, false)
	a.pollClaims(ref, true)
	want := []time.Duration{1, 2, 4, 8, 16, 32, 60, 60, 1}
	if len(waits) != len(want) {
		t.Fatalf("looks asked %v, want %d", waits, len(want))
	}
	for i, w := range want {
		if waits[i] != w*time.Second {
			t.Errorf("look %d after %v, want %v (all: %v)", i+1, waits[i], w*time.Second, waits)
		}
	}
}
