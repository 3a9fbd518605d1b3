package inventory

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// Interceptor sees a SOAP call before vcsim dispatches it and may fail it with a fault.
// A returned handler object serves only calls without a session: vcsim looks m.This up
// in the caller's session afterwards, so to serve a logged-in call differently (e.g. a
// guest that ignores ShutdownGuest) point m.This at another object put in ctx.Map. It
// runs on vcsim's request goroutines: it must be safe for concurrent use.
type Interceptor func(ctx *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault)

// Intercept installs f (nil removes it), for tests that emulate what vcsim cannot: a
// guest that does not comply, or counting the calls a service made (notes/vcsim.md §4.2).
func (s *Sim) Intercept(f Interceptor) {
	if f == nil {
		s.intercept.Store(nil)
		return
	}
	s.intercept.Store(&f)
}

// handle is the registry's method handler: the CNS queries' lock put in place, the
// long-poll bookkeeping, event collectors' destruction, VM template items' deploys, then
// the test's interceptor.
func (s *Sim) handle(ctx *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault) {
	s.cnsLocked.Do(func() { lockCNSQueries(ctx) })
	deployAsVM(ctx, m)
	if h, fault := s.polls.observe(ctx, m); h != nil || fault != nil {
		return h, fault
	}
	if h, ok := s.reaper.serve(m); ok {
		return h, nil
	}
	if f := s.intercept.Load(); f != nil {
		return (*f)(ctx, m)
	}
	return nil, nil
}
