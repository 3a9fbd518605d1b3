package deploytest

import (
	"slices"
	"sync"
	"testing"
)

// afterServices holds, by test, the cleanups to run once the services Serve started for
// it have stopped: a VM a test made is destroyed only then, so that no service is still
// working on it (vcsim does not guard a VM's destroy against a call on the same VM, nor
// against files of its directory removed meanwhile).
var afterServices sync.Map // testing.TB → *cleanups

type cleanups struct {
	mu  sync.Mutex
	fns []func()
}

// AfterServices runs f when t ends, after the services Serve started for t have stopped;
// like t.Cleanup when no service was started for t itself (e.g. in a subtest).
func AfterServices(t testing.TB, f func()) {
	c, ok := afterServices.Load(t)
	if !ok {
		t.Cleanup(f)
		return
	}
	c.(*cleanups).add(f)
}

func (c *cleanups) add(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fns = append(c.fns, f)
}

// run runs the cleanups, last added first, as t.Cleanup does.
func (c *cleanups) run() {
	c.mu.Lock()
	fns := slices.Clone(c.fns)
	c.mu.Unlock()
	for _, f := range slices.Backward(fns) {
		f()
	}
}

// runAfterServices prepares t's cleanups for AfterServices; Serve calls it before it
// starts a service, so that they run after the service's stop.
func runAfterServices(t testing.TB) {
	c, loaded := afterServices.LoadOrStore(t, &cleanups{})
	if loaded {
		return
	}
	t.Cleanup(func() {
		afterServices.Delete(t)
		c.(*cleanups).run()
	})
}
