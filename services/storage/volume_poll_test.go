package storage

import (
	"testing"
	"time"

	"github.com/vmop/vmop/pkg/events"
)

// While a claim's expansion stays pending (a class that forbids it, a refused extend), a
// VM is looked at again after a second, then twice as long each time up to a minute, not
// every second for good; once nothing is pending the waits start over.
func TestPendingExpansionIsPolledLessAndLess(t *testing.T) {
	var waits []time.Duration
	a := &attacher{later: func(_ events.Ref, at time.Time) { waits = append(waits, time.Until(at).Round(time.Second)) }}
	ref := events.Ref{Plural: "virtualmachines", Namespace: "my-namespace", Name: "growing"}
	for range 8 {
		a.pollExpansion(ref, true)
	}
	a.pollExpansion(ref, false)
	a.pollExpansion(ref, true)
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
