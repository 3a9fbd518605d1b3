package reconcile

import (
	"testing"
	"time"
)

// A resync of many subjects hands them out evenly over its period, the first at once and
// all by its end, however many there are (n·elapsed in nanoseconds overflows an int64
// past ~96,000 subjects).
func TestResyncSpreadsManySubjectsEvenly(t *testing.T) {
	for _, n := range []int{1, 10, 200_000, 2_000_000} {
		period := time.Duration(n) * time.Second / resyncRate
		for _, tc := range []struct {
			elapsed time.Duration
			want    int
		}{
			{0, 1},
			{period / 2, n/2 + 1},
			{period - time.Nanosecond, n},
			{period, n},
		} {
			if got := dueBy(n, tc.elapsed, period); got != min(tc.want, n) {
				t.Errorf("%d subjects over %v, %v elapsed: %d due, want %d", n, period, tc.elapsed, got, min(tc.want, n))
			}
		}
	}
}
