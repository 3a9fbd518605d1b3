package readmodel

import (
	"errors"
	"sync"
)

// errClosed is returned by Watch on a closed Store.
var errClosed = errors.New("read model is closed")

// hub fans committed changes out to live watchers. It never blocks the fold: a watcher
// whose buffer is full is dropped (its channel closed), like a too-slow apiserver watch.
type hub struct {
	mu     sync.Mutex
	subs   map[*subscription]struct{}
	closed bool
}

// subscription is one watcher's buffer of changes, already filtered and typed for it.
type subscription struct {
	filter objectFilter
	ch     chan liveChange // closed by the hub on overflow, unsubscribe or close
}

type liveChange struct {
	rec *changeRecord // shared by all watchers: read-only
	typ string        // the type as this watcher sees it
}

func (h *hub) init() { h.subs = map[*subscription]struct{}{} }

func (h *hub) subscribe(f objectFilter, buffer int) (*subscription, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errClosed
	}
	sub := &subscription{filter: f, ch: make(chan liveChange, buffer)}
	h.subs[sub] = struct{}{}
	return sub, nil
}

func (h *hub) unsubscribe(sub *subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[sub]; ok {
		delete(h.subs, sub)
		close(sub.ch)
	}
}

// publish hands committed changes, in log order, to every interested watcher.
func (h *hub) publish(changes []changeRecord) {
	if len(changes) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
next:
	for sub := range h.subs {
		for i := range changes {
			typ, ok := sub.filter.view(&changes[i])
			if !ok {
				continue
			}
			select {
			case sub.ch <- liveChange{rec: &changes[i], typ: typ}:
			default: // too slow: end this watch rather than stall the fold or lose a change
				delete(h.subs, sub)
				close(sub.ch)
				continue next
			}
		}
	}
}

func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	h.endAllLocked()
}

// endAll ends every current watch; new ones may start.
func (h *hub) endAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.endAllLocked()
}

func (h *hub) endAllLocked() {
	for sub := range h.subs {
		delete(h.subs, sub)
		close(sub.ch)
	}
}
