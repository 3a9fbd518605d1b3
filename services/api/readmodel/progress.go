package readmodel

import (
	"context"
	"sync"
)

// progress tracks the applied checkpoints and wakes whoever waits for them.
type progress struct {
	mu           sync.Mutex
	spec, status uint64
	advanced     chan struct{} // closed (and replaced) whenever a checkpoint advances

	// What "caught up" means: the sequences each stream had when Fold started.
	targetSet                bool
	specTarget, statusTarget uint64
	specDone, statusDone     bool
}

func (p *progress) init() { p.advanced = make(chan struct{}) }

// restore sets the checkpoints read from the database at open.
func (p *progress) restore(spec, status uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.spec, p.status = spec, status
}

func (p *progress) checkpoints() position {
	p.mu.Lock()
	defer p.mu.Unlock()
	return position{spec: p.spec, status: p.status}
}

// streamStart is where a stream stood when Fold started.
type streamStart struct {
	lastSeq        uint64
	nothingPending bool // the consumer had nothing to deliver
}

// setTargets starts a catch-up: Fold has caught up on a stream once its checkpoint
// reaches the stream's last sequence at start, or once it applied a message with
// nothing left behind it (the last sequence may be a purged message).
func (p *progress) setTargets(spec, status streamStart) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.targetSet = true
	p.specTarget, p.statusTarget = spec.lastSeq, status.lastSeq
	p.specDone = p.specDone || spec.nothingPending || p.spec >= spec.lastSeq
	p.statusDone = p.statusDone || status.nothingPending || p.status >= status.lastSeq
	p.broadcast()
}

// advance publishes the checkpoints a committed batch reached (0 = unchanged). drained
// reports, per stream, that the batch ended on a message with nothing left behind it.
func (p *progress) advance(spec, status uint64, specDrained, statusDrained bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.spec, p.status = max(p.spec, spec), max(p.status, status)
	if p.targetSet {
		p.specDone = p.specDone || specDrained || p.spec >= p.specTarget
		p.statusDone = p.statusDone || statusDrained || p.status >= p.statusTarget
	}
	p.broadcast()
}

// broadcast wakes every waiter; the caller holds p.mu.
func (p *progress) broadcast() {
	close(p.advanced)
	p.advanced = make(chan struct{})
}

func (p *progress) caughtUp() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.isCaughtUp()
}

// isCaughtUp is caughtUp for a caller holding p.mu.
func (p *progress) isCaughtUp() bool { return p.targetSet && p.specDone && p.statusDone }

// wait blocks until reached holds or ctx ends; reached runs with p.mu held.
func (p *progress) wait(ctx context.Context, reached func() bool) error {
	for {
		p.mu.Lock()
		ok, ch := reached(), p.advanced
		p.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// WaitSpec blocks until the fold has applied the SPECS stream up to seq (read-your-writes
// after an append that returned seq), or ctx ends.
func (s *Store) WaitSpec(ctx context.Context, seq uint64) error {
	return s.progress.wait(ctx, func() bool { return s.progress.spec >= seq })
}

// WaitStatus blocks until the fold has applied the STATUS stream up to seq, or ctx ends.
func (s *Store) WaitStatus(ctx context.Context, seq uint64) error {
	return s.progress.wait(ctx, func() bool { return s.progress.status >= seq })
}

// CaughtUp reports whether the fold has applied everything both streams held when
// [Store.Fold] started (readiness). It stays true once reached.
func (s *Store) CaughtUp() bool { return s.progress.caughtUp() }

// WaitCaughtUp blocks until [Store.CaughtUp] is true or ctx ends.
func (s *Store) WaitCaughtUp(ctx context.Context) error {
	return s.progress.wait(ctx, s.progress.isCaughtUp)
}

// RV is the read model's current list resourceVersion, "<specCheckpoint>.<statusCheckpoint>".
func (s *Store) RV() string { return s.progress.checkpoints().String() }
