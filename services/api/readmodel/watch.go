package readmodel

import (
	"context"
	"fmt"
	"time"
)

// Bookmark is the type of the Change that ends the initial events when
// [WatchOptions.InitialEventsEnd] asks for it; it has no Object, only an RV.
const Bookmark = "BOOKMARK"

// Watch streams the changes of the selected objects until ctx ends, the Store closes or
// the watcher falls more than the watch buffer behind; then the channel is closed and the
// client resumes from the last RV it saw (or lists again after [ErrGone]).
//
// Resuming (FromRV, the position a.b it names: parseRV) replays the logged changes
// triggered after a.b, in log order, then continues live with neither gap nor loss: the
// live feed is joined before the log is read and overlapping changes are dropped by change
// id. Resuming from a watch event's RV repeats nothing; from an object's own version it may
// repeat changes the client has seen, never skip one. With FromRV "" or "0" the watch
// starts now, after the initial ADDED events if SendInitial is set; the live changes that
// follow are those the initial events do not show, none repeated.
//
// Errors: [ErrInvalid] for a malformed RV or selector, [ErrGone] when the change log no
// longer reaches back to FromRV.
func (s *Store) Watch(ctx context.Context, o WatchOptions) (<-chan Change, error) {
	f, err := newFilter(o.Plural, o.Namespace, o.Label, o.Fields)
	if err != nil {
		return nil, err
	}
	from, err := parseRV(o.FromRV)
	if err != nil {
		return nil, err
	}
	sub, err := s.hub.subscribe(f, s.opts.watchBuffer)
	if err != nil {
		return nil, err
	}
	w := &watcher{store: s, filter: f, sub: sub, out: make(chan Change)}
	var catchUp func(context.Context) (uint64, bool)
	switch {
	case o.FromRV != "" && o.FromRV != "0":
		first, err := s.firstReplayPage(from)
		if err != nil {
			s.hub.unsubscribe(sub)
			return nil, err
		}
		w.resume, w.from = true, from
		catchUp = func(ctx context.Context) (uint64, bool) { return w.replay(ctx, first) }
	case o.SendInitial:
		snap := s.initialSnapshot(f)
		catchUp = func(ctx context.Context) (uint64, bool) { return w.initial(ctx, snap, o.InitialEventsEnd) }
	default:
		catchUp = func(context.Context) (uint64, bool) { return 0, true }
	}
	go w.run(ctx, catchUp, o.BookmarkEvery)
	return w.out, nil
}

// watcher is the goroutine behind one Watch.
type watcher struct {
	store  *Store
	filter objectFilter
	sub    *subscription
	out    chan Change
	resume bool
	from   position // with resume: deliver only changes triggered after it
}

// run catches up (replay or initial events), then forwards live changes it has not sent,
// with a bookmark every bookmarkEvery.
func (w *watcher) run(ctx context.Context, catchUp func(context.Context) (uint64, bool), bookmarkEvery time.Duration) {
	defer close(w.out)
	defer w.store.hub.unsubscribe(w.sub)
	lastID, ok := catchUp(ctx)
	if !ok {
		return
	}
	var tick <-chan time.Time
	if bookmarkEvery > 0 {
		t := time.NewTicker(bookmarkEvery)
		defer t.Stop()
		tick = t.C
	}
	var mark *pendingBookmark
	for {
		if mark != nil && mark.before == 0 {
			if !w.send(ctx, Change{Type: Bookmark, RV: mark.at.String()}) {
				return
			}
			mark = nil
		}
		select {
		case <-ctx.Done():
			return
		case <-tick:
			if mark == nil {
				mark = w.bookmarkNow()
			}
		case c, open := <-w.sub.ch:
			if !open {
				return
			}
			if mark != nil {
				mark.before--
			}
			if c.rec.ID <= lastID || (w.resume && !w.from.after(c.rec.Stream, c.rec.Seq)) {
				continue
			}
			if !w.send(ctx, Change{Type: c.typ, Object: c.rec.Object, RV: c.rec.RV}) {
				return
			}
		}
	}
}

// pendingBookmark is a bookmark at a position, to send once the changes queued for the
// watcher when the position was read are handled.
type pendingBookmark struct {
	at     position
	before int // queued changes still to handle before sending it
}

// bookmarkNow picks the read model's position for a bookmark. The fold hands a batch's
// changes to the hub before it advances the checkpoints, so every change up to the
// position read is already queued: after those queued now, the bookmark loses nothing.
func (w *watcher) bookmarkNow() *pendingBookmark {
	at := w.store.progress.checkpoints()
	if w.resume { // never behind where the client resumed from: it skipped the changes up to there
		at = position{spec: max(at.spec, w.from.spec), status: max(at.status, w.from.status)}
	}
	return &pendingBookmark{at: at, before: len(w.sub.ch)}
}

func (w *watcher) send(ctx context.Context, c Change) bool {
	select {
	case w.out <- c:
		return true
	case <-ctx.Done():
		return false
	}
}

// firstReplayPage checks that the log reaches back to from and reads its first page, in
// one snapshot so that pruning cannot slip in between.
func (s *Store) firstReplayPage(from position) ([]changeRecord, error) {
	tx, err := s.reader.Beginx()
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	defer tx.Rollback()
	h, err := readHorizon(tx)
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	if !h.covers(from) {
		return nil, fmt.Errorf("resourceVersion %s: %w", from, ErrGone)
	}
	page, err := readChanges(tx, 0, from)
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	return page, nil
}

// replay sends the logged changes after w.from page by page and returns the last change
// id it read; ok is false when the watch must end (ctx, or the log was pruned under a
// replay too slow to keep up).
func (w *watcher) replay(ctx context.Context, page []changeRecord) (lastID uint64, ok bool) {
	for {
		for i := range page {
			lastID = page[i].ID
			if typ, ok := w.filter.view(&page[i]); ok {
				if !w.send(ctx, Change{Type: typ, Object: page[i].Object, RV: page[i].RV}) {
					return 0, false
				}
			}
		}
		if len(page) < replayPageSize {
			return lastID, true
		}
		var err error
		if page, err = w.store.nextReplayPage(lastID, w.from); err != nil {
			w.store.opts.logger.Warn("watch replay ended", "err", err)
			return 0, false
		}
	}
}

func (s *Store) nextReplayPage(afterID uint64, from position) ([]changeRecord, error) {
	tx, err := s.reader.Beginx()
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	h, err := readHorizon(tx)
	if err != nil {
		return nil, err
	}
	if h.PrunedID > afterID {
		return nil, fmt.Errorf("change log pruned past change %d during the replay", afterID)
	}
	return readChanges(tx, afterID, from)
}

// snapshot is the start of a watch with initial events: the matching objects, the list
// RV and the newest change they reflect, read together from the cache.
type snapshot struct {
	lastID uint64
	rv     position
	items  []*Object
}

func (s *Store) initialSnapshot(f objectFilter) snapshot {
	v := s.cache.selectObjects(f, objectKey{}, 0)
	return snapshot{lastID: v.lastID, rv: v.at, items: v.items}
}

// initial sends a synthetic ADDED per object of the snapshot, then the optional bookmark.
func (w *watcher) initial(ctx context.Context, snap snapshot, bookmark bool) (uint64, bool) {
	for _, o := range snap.items {
		if !w.send(ctx, Change{Type: Added, Object: o.JSON, RV: o.RV}) {
			return 0, false
		}
	}
	if bookmark && !w.send(ctx, Change{Type: Bookmark, RV: snap.rv.String(), InitialEventsEnd: true}) {
		return 0, false
	}
	return snap.lastID, true
}
