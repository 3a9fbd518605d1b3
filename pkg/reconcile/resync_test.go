package reconcile

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// A resync hands out its objects evenly over the period, not all at one tick, and ends
// with the period.
func TestResyncSpreadsOverThePeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n, period = 50, 10 * time.Second
		subjects := make([]string, n)
		for i := range subjects {
			subjects[i] = fmt.Sprint(i)
		}
		start := time.Now()
		var at []time.Duration
		if !spread(context.Background(), period, start, subjects, func(string) { at = append(at, time.Since(start)) }) {
			t.Fatal("spread ended early")
		}
		if got := time.Since(start); got != period {
			t.Errorf("spread returned after %v, want the period %v", got, period)
		}
		if len(at) != n {
			t.Fatalf("%d subjects enqueued, want %d", len(at), n)
		}
		for i, d := range at {
			due := period * time.Duration(i) / n
			if d < due || d > due+resyncStep+period/n {
				t.Errorf("subject %d enqueued at %v, want from %v to %v", i, d, due, due+resyncStep+period/n)
			}
		}
	})
}
