package events

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// TestKeyedQueueSerialisesAKey shows that a key's jobs never overlap and run
// in the order they were added, even with free workers.
func TestKeyedQueueSerialisesAKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewKeyedQueue(4)
		release := make(chan struct{})
		var running atomic.Int32
		var mu sync.Mutex
		var order []int
		for i := range 5 {
			q.add("vm-a", func() {
				if n := running.Add(1); n != 1 {
					t.Errorf("job %d runs beside %d other jobs of its key", i, n-1)
				}
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				<-release
				running.Add(-1)
			})
		}
		synctest.Wait() // every goroutine is blocked: only the first job can have started
		mu.Lock()
		if want := []int{0}; !slices.Equal(order, want) {
			t.Errorf("started %v while the first job runs, want %v", order, want)
		}
		mu.Unlock()
		close(release)
		synctest.Wait()
		if want := []int{0, 1, 2, 3, 4}; !slices.Equal(order, want) {
			t.Errorf("jobs ran in order %v, want %v", order, want)
		}
	})
}

// TestKeyedQueueRunsKeysInParallel shows that different keys run at the same
// time, up to the number of workers.
func TestKeyedQueueRunsKeysInParallel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const workers = 3
		q := NewKeyedQueue(workers)
		release := make(chan struct{})
		var running, peak atomic.Int32
		for i := range 2 * workers {
			q.add(fmt.Sprintf("vm-%d", i), func() {
				n := running.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				<-release
				running.Add(-1)
			})
		}
		synctest.Wait()
		if got := running.Load(); got != workers {
			t.Errorf("%d keys run at once, want %d (the workers)", got, workers)
		}
		close(release)
		synctest.Wait()
		if got := peak.Load(); got != workers {
			t.Errorf("at most %d keys ran at once, want %d", got, workers)
		}
		if got := len(q.backlog); got != 0 {
			t.Errorf("queue remembers %d keys after all jobs ran, want 0", got)
		}
	})
}

// TestKeyedQueueHoldsNoWorkerForAWaitingKey shows that jobs queued behind a
// busy key do not keep other keys from running.
func TestKeyedQueueHoldsNoWorkerForAWaitingKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewKeyedQueue(2)
		releaseA := make(chan struct{})
		for range 3 {
			q.add("vm-a", func() { <-releaseA })
		}
		done := make(chan string, 3)
		for _, k := range []string{"vm-b", "vm-c", "vm-d"} {
			q.add(k, func() { done <- k })
		}
		synctest.Wait()
		if got := len(done); got != 3 {
			t.Errorf("%d other keys ran while vm-a is busy, want 3", got)
		}
		close(releaseA)
	})
}
