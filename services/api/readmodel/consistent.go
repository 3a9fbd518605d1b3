package readmodel

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmop/vmop/pkg/events"
)

// Consistent reads: like kube-apiserver answering a get or list without resourceVersion
// from its watch cache once the cache has reached etcd's current revision, the gateway
// waits until the fold has applied what both streams held when the request came.

// headsTimeout bounds one read of the streams' heads.
const headsTimeout = 5 * time.Second

// tailGrace is how long a wait for a stream's last sequence goes before checking whether
// that message is gone (a purged status slice): the fold never sees a deleted message, so
// the wait then aims at the newest message the stream still holds.
const tailGrace = 50 * time.Millisecond

// Heads reads where the SPECS and STATUS streams end. Requests that arrive while a read is
// under way share the next one, so a burst of consistent reads costs the streams two
// requests per round trip rather than two per read.
type Heads struct {
	js jetstream.JetStream

	mu      sync.Mutex
	next    *headsRound // the round that starts after the running one
	running bool
}

type headsRound struct {
	done chan struct{}
	at   position
	err  error
}

// NewHeads reads the heads of js's SPECS and STATUS streams.
func NewHeads(js jetstream.JetStream) *Heads { return &Heads{js: js} }

// read returns the streams' last sequences as of a moment after the call began.
func (h *Heads) read(ctx context.Context) (position, error) {
	h.mu.Lock()
	r := h.next
	if r == nil {
		r = &headsRound{done: make(chan struct{})}
		h.next = r
		if !h.running {
			h.running = true
			go h.run()
		}
	}
	h.mu.Unlock()
	select {
	case <-r.done:
		return r.at, r.err
	case <-ctx.Done():
		return position{}, ctx.Err()
	}
}

func (h *Heads) run() {
	for {
		h.mu.Lock()
		r := h.next
		h.next = nil
		if r == nil {
			h.running = false
			h.mu.Unlock()
			return
		}
		h.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), headsTimeout)
		var specErr error
		var both sync.WaitGroup
		both.Go(func() { r.at.spec, specErr = events.Head(ctx, h.js, events.StreamSpecs) })
		r.at.status, r.err = events.Head(ctx, h.js, events.StreamStatus)
		both.Wait()
		r.err = errors.Join(specErr, r.err)
		cancel()
		close(r.done)
	}
}

// WaitCurrent blocks until the read model reflects every message the streams held when it
// was called, or ctx ends.
func (s *Store) WaitCurrent(ctx context.Context, h *Heads) error {
	at, err := h.read(ctx)
	if err != nil {
		return err
	}
	reached := func() bool { return s.progress.spec >= at.spec && s.progress.status >= at.status }
	graceCtx, cancel := context.WithTimeout(ctx, tailGrace)
	err = s.progress.wait(graceCtx, reached)
	cancel()
	if err == nil || ctx.Err() != nil {
		return err
	}
	// Still behind: either the fold is busy or a stream's last message is gone.
	cp := s.progress.checkpoints()
	if cp.spec < at.spec {
		if at.spec, err = events.LastSeq(ctx, h.js, events.StreamSpecs, events.SpecFilter("")); err != nil {
			return err
		}
	}
	if cp.status < at.status {
		if at.status, err = events.LastSeq(ctx, h.js, events.StreamStatus, events.StatusFilter("")); err != nil {
			return err
		}
	}
	return s.progress.wait(ctx, reached)
}
