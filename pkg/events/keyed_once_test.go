package events

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// A key with a job waiting is not queued again; one that only runs gets one job behind
// it, so a change made during the running job is still reconciled.
func TestKeyedQueueDoOnceQueuesAKeyOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewKeyedQueue(1)
		release := make(chan struct{})
		var ran atomic.Int32
		q.Do("vm-a", func() { <-release })
		synctest.Wait() // vm-a runs
		if !q.DoOnce("vm-a", func() { ran.Add(1) }) {
			t.Fatal("DoOnce behind a running job did not queue")
		}
		for range 3 {
			if q.DoOnce("vm-a", func() { ran.Add(1) }) {
				t.Error("DoOnce queued behind a waiting job")
			}
		}
		if !q.DoOnce("vm-b", func() { ran.Add(1) }) {
			t.Error("DoOnce of an idle key did not queue")
		}
		close(release)
		synctest.Wait()
		if got := ran.Load(); got != 2 {
			t.Errorf("%d jobs ran, want 2 (one per key)", got)
		}
		if got := q.Len(); got != 0 {
			t.Errorf("queue holds %d jobs after all ran, want 0", got)
		}
	})
}
