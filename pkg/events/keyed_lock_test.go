package events

import (
	"testing"
	"time"
)

// A goroutine waiting for a sync.Mutex is not durably blocked for testing/synctest, so these
// tests wait on conditions with a deadline instead.

// waitFor polls cond until it holds, failing the test after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
	}
}

// closed is whether ch is closed, without waiting.
func closed(ch <-chan struct{}) func() bool {
	return func() bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
}

// TestKeyedLocksSerialiseAKey shows that a key's second holder waits for the first's
// release, that a release called twice releases once, and that a free key is forgotten.
func TestKeyedLocksSerialiseAKey(t *testing.T) {
	var l KeyedLocks
	unlock := l.Lock("ns-a")
	got := make(chan struct{})
	release := make(chan struct{})
	go func() {
		defer l.Lock("ns-a")()
		close(got)
		<-release
	}()
	waitFor(t, "the second holder waits", func() bool { return l.Users("ns-a") == 2 })
	if closed(got)() {
		t.Fatal("a second holder took the key's lock while the first held it")
	}
	unlock()
	unlock() // the deferred release after an early one: the key stays the second's
	waitFor(t, "the second holder has the lock", closed(got))
	if n := l.Users("ns-a"); n != 1 {
		t.Errorf("Users = %d while the second holds, want 1", n)
	}
	close(release)
	waitFor(t, "the free key is forgotten", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.held) == 0
	})
}

// TestKeyedLocksKeysAreIndependent shows that holding one key's lock does not hold
// another's.
func TestKeyedLocksKeysAreIndependent(t *testing.T) {
	var l KeyedLocks
	defer l.Lock("cluster-a")()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer l.Lock("cluster-b")()
	}()
	waitFor(t, "cluster-b's lock is taken beside cluster-a's", closed(done))
}
