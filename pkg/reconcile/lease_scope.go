package reconcile

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
)

// A scope lease serialises a decision that spans objects across a service's replicas:
// placement's choices within a namespace (where its other VMs are), the attachment of one
// CNS volume. It is a lease of the service's bucket like an object's (same TTL, renewal and
// loss), under a key of events.ScopeLeaseKey. Unlike an object's lease, which the reconciles
// of one object in a process share, a scope is held by one caller at a time: within the
// process its holders queue at a gate before taking the lease.

// errScopeLost ends a scope whose lease could not be renewed in time: another replica may
// hold it now.
var errScopeLost = errors.New("the scope's lease was lost")

// HoldScope runs f while this caller alone, over every replica of service, holds the scope
// kind/name; others wait until f returns (or, for a replica that died holding it, until the
// lease expires). f's ctx is cancelled once the lease is lost, and when HoldScope returns:
// work f starts must not outlive it. A lease lost while f ran fails HoldScope, even when f
// succeeded, so the caller retries its decision from what it reads then. Scopes held
// together are taken in one order by every caller (a caller holding a scope and asking for
// it again waits for itself).
func HoldScope(ctx context.Context, js jetstream.JetStream, service, kind, name string, f func(ctx context.Context) error) error {
	s := leasesOf(js, service)
	key := events.ScopeLeaseKey(kind, name)
	leave, err := scopeGates.enter(ctx, s, key)
	if err != nil {
		return fmt.Errorf("scope %s/%s: %w", kind, name, err)
	}
	defer leave()
	l, _, err := s.acquire(ctx, key)
	if err != nil {
		return fmt.Errorf("lease of scope %s/%s: %w", kind, name, err)
	}
	stopped := false
	defer func() { s.release(stopped, key, l) }()
	fctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(l.lost, func() { cancel(errScopeLost) })
	defer stop()
	err = f(fctx)
	stopped = err != nil && ctx.Err() != nil
	if l.lost.Err() != nil {
		return errors.Join(err, fmt.Errorf("scope %s/%s: %w", kind, name, errScopeLost))
	}
	return err
}

// scopeGates admit one holder of a scope at a time within the process.
var scopeGates gates

type gateKey struct {
	set *leaseSet
	key string
}

// gates is one single-slot gate per scope, kept only while someone holds or waits for it.
type gates struct {
	mu   sync.Mutex
	open map[gateKey]*gate
}

type gate struct {
	slot  chan struct{} // full while held
	users int           // holding or waiting
}

// enter waits for the scope's gate, or for ctx to end; leave lets the next one in.
func (g *gates) enter(ctx context.Context, s *leaseSet, key string) (leave func(), err error) {
	k := gateKey{s, key}
	g.mu.Lock()
	if g.open == nil {
		g.open = map[gateKey]*gate{}
	}
	gt := g.open[k]
	if gt == nil {
		gt = &gate{slot: make(chan struct{}, 1)}
		g.open[k] = gt
	}
	gt.users++
	g.mu.Unlock()
	out := func() {
		g.mu.Lock()
		if gt.users--; gt.users == 0 {
			delete(g.open, k)
		}
		g.mu.Unlock()
	}
	select {
	case gt.slot <- struct{}{}:
		return func() { <-gt.slot; out() }, nil
	case <-ctx.Done():
		out()
		return nil, ctx.Err()
	}
}
