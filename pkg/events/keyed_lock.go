package events

import "sync"

// KeyedLocks is one mutex per key, for work that reaches a key by more than one path (a
// triggered reconcile beside a consumer's) or must not overlap another key's work (placement
// decisions of one namespace). A key's mutex is kept only while someone holds or waits for
// it, so keys that come and go cost nothing. The zero value is ready to use.
type KeyedLocks struct {
	mu   sync.Mutex
	held map[string]*keyedLock
}

type keyedLock struct {
	mu    sync.Mutex
	users int // holding or waiting
}

// Lock takes key's lock and returns its release, which may be called more than once (an
// early release before a deferred one).
func (l *KeyedLocks) Lock(key string) (unlock func()) {
	l.mu.Lock()
	if l.held == nil {
		l.held = map[string]*keyedLock{}
	}
	kl := l.held[key]
	if kl == nil {
		kl = &keyedLock{}
		l.held[key] = kl
	}
	kl.users++
	l.mu.Unlock()
	kl.mu.Lock()
	return sync.OnceFunc(func() {
		kl.mu.Unlock()
		l.mu.Lock()
		if kl.users--; kl.users == 0 {
			delete(l.held, key)
		}
		l.mu.Unlock()
	})
}

// Users is how many hold or wait for key's lock.
func (l *KeyedLocks) Users(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if kl := l.held[key]; kl != nil {
		return kl.users
	}
	return 0
}
