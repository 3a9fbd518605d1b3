package placement

import "sync"

// keyedLocks serialise work per key. Placement decisions lock their namespace: a decision
// reads where the namespace's other VMs are (affinity) and is recorded in the VM's slice
// before the lock is released, so two VMs kept apart by a rule never choose the same place
// at once. Cluster rule edits lock their cluster: each reads the rules and writes them back.
type keyedLocks struct {
	mu sync.Mutex
	m  map[string]*sync.Mutex
}

// lock locks key and returns its unlock, which may be called more than once.
func (l *keyedLocks) lock(key string) func() {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*sync.Mutex{}
	}
	m, ok := l.m[key]
	if !ok {
		m = &sync.Mutex{}
		l.m[key] = m
	}
	l.mu.Unlock()
	m.Lock()
	return sync.OnceFunc(m.Unlock)
}
