package readmodel

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmop/vmop/pkg/events"
)

const (
	// maxBatch bounds how many messages one transaction applies. Batches form on their own:
	// whatever arrived while the previous transaction committed is applied together, so a
	// lone write is folded at once (read-your-writes latency) and a burst in few commits.
	maxBatch = 200
	// walIdle is how long the fold must be idle before it truncates the WAL, which
	// constant readers could otherwise keep growing.
	walIdle = 2 * time.Second
)

// Fold applies the SPECS and STATUS streams to the read model until ctx ends; it returns
// nil then, and an error only when it cannot go on (database failure). It resumes after
// the stored checkpoints, so calling it again (after a restart, or after an error)
// continues exactly where the last committed batch ended; so does Fold itself when its
// feed of the streams fails (a lost NATS node whose consumer cannot be recreated): it
// follows the streams again, and [Store.Following] is false meanwhile. At most one Fold
// runs per Store.
//
// Before resuming it checks that the streams still hold the messages of the checkpoints;
// if not, it rebuilds the projection from the streams under a new [Store.Epoch]. While the
// rebuilt projection catches up, the changes it folds are live for current watches but not
// resumable: a resourceVersion from before the catch-up gets [ErrGone], since the log does
// not hold the history as it happened.
func (s *Store) Fold(ctx context.Context, js jetstream.JetStream) error {
	if !s.folding.CompareAndSwap(false, true) {
		return errors.New("fold is already running")
	}
	defer s.folding.Store(false)
	rebuilding := false
	return events.FollowAgain(ctx, s.opts.logger, "read model follows the streams again", func(ctx context.Context) (bool, error) {
		return s.fold(ctx, js, &rebuilding)
	})
}

// Following reports whether Fold is running with its feeds of both streams open.
func (s *Store) Following() bool { return s.following.Load() }

// fold follows the streams from the checkpoints until ctx ends or something fails;
// opened: the feeds were open. rebuilding: the projection started over and has not caught
// up yet, so what it folds is not resumable (it outlives one fold).
func (s *Store) fold(ctx context.Context, js jetstream.JetStream, rebuilding *bool) (opened bool, _ error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	startedOver, err := s.verifyCheckpoints(ctx, js)
	if err != nil {
		return false, err
	}
	*rebuilding = *rebuilding || startedOver
	from := s.progress.checkpoints()
	specs, specStart, err := openFeed(ctx, js, events.StreamSpecs, events.SpecFilter(""), from.spec)
	if err != nil {
		return false, err
	}
	defer specs.Stop()
	statuses, statusStart, err := openFeed(ctx, js, events.StreamStatus, events.StatusFilter(""), from.status)
	if err != nil {
		return false, err
	}
	defer statuses.Stop()
	s.progress.setTargets(specStart, statusStart)

	in := make(chan inbound, 2*maxBatch)
	errc := make(chan error, 2)
	var pumps sync.WaitGroup
	pumps.Go(func() { pump(ctx, events.StreamSpecs, specs, in, errc) })
	pumps.Go(func() { pump(ctx, events.StreamStatus, statuses, in, errc) })
	s.following.Store(true)
	err = s.foldLoop(ctx, in, errc, rebuilding)
	s.following.Store(false)
	cancel()
	specs.Stop() // a pump may wait in a recreation of its consumer, which only Stop ends
	statuses.Stop()
	pumps.Wait()
	return true, err
}

// openFeed follows stream after sequence after, and tells where the stream stood at that
// moment, which is what catching up means.
func openFeed(ctx context.Context, js jetstream.JetStream, stream, filter string, after uint64) (*events.Feed, streamStart, error) {
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}}
	if after > 0 {
		cfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
		cfg.OptStartSeq = after + 1
	}
	feed, err := events.Follow(ctx, js, stream, cfg)
	if err != nil {
		return nil, streamStart{}, fmt.Errorf("%w: %w", events.ErrFeed, err)
	}
	if after > feed.StreamLast {
		feed.Stop()
		return nil, streamStart{}, fmt.Errorf("read model has applied %s up to %d but the stream ends at %d "+
			"(was it recreated?): delete the read model file to rebuild it", stream, after, feed.StreamLast)
	}
	// The last sequence may belong to a purged message that will never be delivered;
	// a consumer with nothing to deliver from the start is caught up already.
	return feed, streamStart{lastSeq: feed.StreamLast, nothingPending: feed.Pending == 0 && feed.Delivered == 0}, nil
}

// pump forwards one stream's messages, in order, to the fold loop.
func pump(ctx context.Context, stream string, it jetstream.MessagesContext, out chan<- inbound, errc chan<- error) {
	for {
		msg, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			if ctx.Err() == nil {
				errc <- fmt.Errorf("%w: consume stream %s: %w", events.ErrFeed, stream, err)
			}
			return
		}
		meta, err := msg.Metadata()
		if err != nil {
			errc <- fmt.Errorf("%w: consume stream %s: %w", events.ErrFeed, stream, err)
			return
		}
		m := inbound{stream: stream, seq: meta.Sequence.Stream, pending: meta.NumPending, msg: msg}
		select {
		case out <- m:
		case <-ctx.Done():
			return
		}
	}
}

// foldLoop gathers messages into batches and commits them until ctx ends. rebuilding: the
// projection started over, and what it folds until it caught up is not resumable.
func (s *Store) foldLoop(ctx context.Context, in <-chan inbound, errc <-chan error, rebuilding *bool) error {
	idle := time.NewTimer(walIdle)
	defer idle.Stop()
	dirty := false
	for {
		var first inbound
		select {
		case <-ctx.Done():
			return nil
		case err := <-errc:
			return err
		case <-idle.C:
			if dirty {
				s.truncateWAL()
				dirty = false
			}
			continue
		case first = <-in:
		}
		msgs := gather(in, first)
		*rebuilding = *rebuilding && !s.progress.caughtUp()
		if err := s.commit(msgs, *rebuilding); err != nil {
			return err
		}
		dirty = true
		idle.Reset(walIdle)
	}
}

// gather takes first and whatever else is already waiting, up to maxBatch.
func gather(in <-chan inbound, first inbound) []inbound {
	msgs := append(make([]inbound, 0, maxBatch), first)
	for len(msgs) < maxBatch {
		select {
		case m := <-in:
			msgs = append(msgs, m)
		default:
			return msgs
		}
	}
	return msgs
}

// commit applies msgs and the checkpoints they reach in one transaction, then wakes
// waiters and watchers. With hide, a watch cannot resume from before these checkpoints.
func (s *Store) commit(msgs []inbound, hide bool) error {
	tx, err := s.writer.Beginx()
	if err != nil {
		return fmt.Errorf("fold: begin: %w", err)
	}
	defer tx.Rollback()
	b := batch{tx: tx, from: s.progress.checkpoints()}
	drained := map[string]bool{}
	for _, m := range msgs {
		if err := b.apply(m); err != nil {
			if !errors.Is(err, errMalformed) {
				return fmt.Errorf("fold %s seq %d: %w", m.stream, m.seq, err)
			}
			s.opts.logger.Warn("read model skips a message it cannot use", "stream", m.stream, "seq", m.seq, "err", err)
		}
		drained[m.stream] = m.pending == 0
	}
	if err := b.saveCheckpoints(); err != nil {
		return err
	}
	if hide {
		cp := s.progress.checkpoints()
		if err := b.hideFromResumption(position{max(cp.spec, b.spec), max(cp.status, b.status)}); err != nil {
			return err
		}
	}
	if err := b.pruneLog(s.opts.changeLogSize); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("fold: commit: %w", err)
	}
	var lastID uint64
	if len(b.changes) > 0 {
		lastID = b.changes[len(b.changes)-1].ID
	}
	s.cache.apply(b.cached, position{b.spec, b.status}, lastID)
	s.hub.publish(b.changes)
	s.progress.advance(b.spec, b.status, drained[events.StreamSpecs], drained[events.StreamStatus])
	return nil
}

// truncateWAL folds the WAL back into the database file while nothing is being written.
// A busy checkpoint is not an error: it is retried at the next idle moment.
func (s *Store) truncateWAL() {
	if _, err := s.writer.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		s.opts.logger.Warn("read model WAL checkpoint failed", "err", err)
	}
}
