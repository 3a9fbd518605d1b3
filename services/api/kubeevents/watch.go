package kubeevents

import (
	"context"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/fields"
)

const (
	watchBuffer = 1024 // changes a watcher may fall behind before its watch ends
	pageSize    = 500  // Events one read of a watch's catch-up loads
)

// Change types of a watch: Events are never modified, and one past Retention is gone
// without a word, as an Event past kube-apiserver's TTL is.
const (
	Added    = "ADDED"
	Bookmark = "BOOKMARK" // ends the initial Events when asked; only RV is set
)

// Change is one watch event.
type Change struct {
	Type  string
	Event []byte // v1 Event JSON; nil for a bookmark
	RV    string
}

// WatchOptions select a watch's Events and where it starts.
type WatchOptions struct {
	Namespace string
	Fields    fields.Selector
	// FromRV: resume after this resourceVersion. "" or "0": start now, sending the
	// current Events first as ADDED, then a bookmark if InitialEventsEnd.
	FromRV           string
	InitialEventsEnd bool
}

// subscription is one watcher's buffer of live Events.
type subscription struct {
	filter filter
	ch     chan row
}

// Watch streams the selected Events until ctx ends, the Store closes or the watcher falls
// too far behind; then the channel is closed and the client resumes from the last RV it
// saw. Errors: ErrInvalid (selector, RV), ErrGone (an RV older than the Events kept).
func (s *Store) Watch(ctx context.Context, o WatchOptions) (<-chan Change, error) {
	f, err := newFilter(o.Namespace, o.Fields)
	if err != nil {
		return nil, err
	}
	var from uint64
	initial := o.FromRV == "" || o.FromRV == "0"
	if !initial {
		if from, err = strconv.ParseUint(o.FromRV, 10, 64); err != nil {
			return nil, fmt.Errorf("%w: resourceVersion %q", ErrInvalid, o.FromRV)
		}
	}
	sub := &subscription{filter: f, ch: make(chan row, watchBuffer)}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, fmt.Errorf("events store is closed")
	}
	if !initial && from < s.pruned {
		s.mu.Unlock()
		return nil, fmt.Errorf("%w: %d (the oldest Event kept follows %d)", ErrGone, from, s.pruned)
	}
	s.subs[sub] = struct{}{}
	s.mu.Unlock()

	out := make(chan Change)
	go func() {
		defer close(out)
		defer s.unsubscribe(sub)
		last, ok := s.catchUp(ctx, f, from, out)
		if !ok {
			return
		}
		if initial && o.InitialEventsEnd && !send(ctx, out, Change{Type: Bookmark, RV: fmt.Sprint(last)}) {
			return
		}
		for {
			select {
			case <-ctx.Done():
				return
			case r, open := <-sub.ch:
				if !open {
					return
				}
				if r.Seq <= last {
					continue // read by the catch-up already
				}
				if !send(ctx, out, Change{Type: Added, Event: r.Event, RV: fmt.Sprint(r.Seq)}) {
					return
				}
				last = r.Seq
			}
		}
	}()
	return out, nil
}

// catchUp sends the stored Events after seq from, page by page, and returns the position
// they reach: every Event up to it was sent or not selected. The watch has subscribed
// before, so what is committed meanwhile arrives live too (and is skipped by sequence).
func (s *Store) catchUp(ctx context.Context, f filter, from uint64, out chan<- Change) (uint64, bool) {
	last := from
	for {
		applied, _ := s.position() // committed before the read below, so within its snapshot
		page, err := s.readPage(ctx, f, last, pageSize)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("events watch ended", "err", err)
			}
			return 0, false
		}
		for _, r := range page {
			if !send(ctx, out, Change{Type: Added, Event: r.Event, RV: fmt.Sprint(r.Seq)}) {
				return 0, false
			}
			last = r.Seq
		}
		if len(page) < pageSize {
			return max(last, applied), true
		}
	}
}

func send(ctx context.Context, out chan<- Change, c Change) bool {
	select {
	case out <- c:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *Store) unsubscribe(sub *subscription) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.subs[sub]; ok {
		delete(s.subs, sub)
		close(sub.ch)
	}
}
