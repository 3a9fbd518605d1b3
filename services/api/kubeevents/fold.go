package kubeevents

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"

	"github.com/vmop/vmop/pkg/events"
)

const (
	maxBatch      = 200              // messages applied in one transaction
	pruneInterval = time.Minute      // how often Events past Retention are removed
	syncTimeout   = 10 * time.Second // how long a consistent read waits for the fold
)

// Fold follows EVENTS from [Retention] ago and keeps the table until ctx ends; it returns
// nil then, and an error only when it cannot go on (database failure). When its feed of
// the stream fails (a lost NATS node whose consumer cannot be recreated), it follows the
// stream again after the last Event it folded.
func (s *Store) Fold(ctx context.Context, js jetstream.JetStream) error {
	return events.FollowAgain(ctx, s.log, "events follow the stream again", func(ctx context.Context) (bool, error) {
		return s.fold(ctx, js)
	})
}

// fold follows EVENTS until ctx ends or something fails; opened: the feed was open.
func (s *Store) fold(ctx context.Context, js jetstream.JetStream) (opened bool, _ error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{events.EventFilter()}}
	if applied, _ := s.position(); applied > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, applied+1
	} else {
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, ptr(time.Now().Add(-Retention))
	}
	feed, err := events.Follow(ctx, js, events.StreamEvents, cfg)
	if err != nil {
		return false, fmt.Errorf("%w: %w", events.ErrFeed, err)
	}
	defer feed.Stop()
	if feed.Pending == 0 { // nothing within Retention: the fold is current at the stream's end
		s.start(feed.StreamLast)
	}

	in := make(chan jetstream.Msg, maxBatch)
	errc := make(chan error, 1)
	go func() {
		for {
			msg, err := feed.Next(jetstream.NextContext(ctx))
			if err != nil {
				errc <- err
				return
			}
			select {
			case in <- msg:
			case <-ctx.Done():
				return
			}
		}
	}()
	prune := time.NewTicker(pruneInterval)
	defer prune.Stop()
	for {
		select {
		case <-ctx.Done():
			return true, nil
		case err := <-errc:
			return true, fmt.Errorf("%w: consume stream %s: %w", events.ErrFeed, events.StreamEvents, err)
		case <-prune.C:
			if err := s.prune(time.Now().Add(-Retention)); err != nil {
				return true, err
			}
		case msg := <-in:
			if err := s.commit(gather(in, msg)); err != nil {
				return true, err
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

// gather takes first and whatever else is already waiting, up to maxBatch.
func gather(in <-chan jetstream.Msg, first jetstream.Msg) []jetstream.Msg {
	msgs := []jetstream.Msg{first}
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

// start sets where the fold begins: every Event up to seq is out of its reach.
func (s *Store) start(seq uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		s.started, s.pruned, s.applied = true, seq, max(s.applied, seq)
		close(s.advanced)
		s.advanced = make(chan struct{})
	}
}

// commit stores the Events of msgs in one transaction, then moves applied past them and
// hands them to the watchers. A message that is no Event (not a CloudEvent, about a
// cluster-scoped object) is logged and passed over.
func (s *Store) commit(msgs []jetstream.Msg) error {
	tx, err := s.writer.Beginx()
	if err != nil {
		return fmt.Errorf("fold events: %w", err)
	}
	defer tx.Rollback()
	var last uint64
	var added []row
	for _, m := range msgs {
		meta, err := m.Metadata()
		if err != nil {
			return fmt.Errorf("fold events: %w", err)
		}
		last = meta.Sequence.Stream
		s.start(last - 1)
		ev, err := Convert(m.Subject(), last, meta.Timestamp, m.Data())
		if err != nil {
			s.log.Warn("events: a message is no Kubernetes Event", "seq", last, "err", err)
			continue
		}
		r, err := insert(tx, ev, meta.Timestamp)
		if err != nil {
			return err
		}
		added = append(added, r)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("fold events: %w", err)
	}
	s.advance(last, added)
	return nil
}

// insert stores one Event.
func insert(tx *sqlx.Tx, ev *corev1.Event, stored time.Time) (row, error) {
	body, err := json.Marshal(ev)
	if err != nil {
		return row{}, fmt.Errorf("encode event %s: %w", ev.Name, err)
	}
	r := rowOf(ev, body)
	_, err = tx.Exec(`INSERT OR REPLACE INTO events
		(seq, namespace, name, kind, api_version, object_name, object_uid, reason, type, source, stored, event)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.Seq, r.Namespace, r.Name, r.Kind, r.APIVersion, r.ObjectName, r.ObjectUID, r.Reason, r.Type, r.Source,
		stored.UnixNano(), body)
	if err != nil {
		return row{}, fmt.Errorf("store event %s: %w", ev.Name, err)
	}
	return r, nil
}

// advance publishes what a commit reached and wakes readers and watchers.
func (s *Store) advance(applied uint64, added []row) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applied = max(s.applied, applied)
	close(s.advanced)
	s.advanced = make(chan struct{})
next:
	for sub := range s.subs {
		for i := range added {
			if !sub.filter.matches(&added[i]) {
				continue
			}
			select {
			case sub.ch <- added[i]:
			default: // too slow: end this watch rather than stall the fold
				delete(s.subs, sub)
				close(sub.ch)
				continue next
			}
		}
	}
}

// pruneQuery finds the newest Event past the retention. Left to itself SQLite answers
// MAX(seq) by walking the table down from the newest row until one is old enough: with
// none that old (the usual case) it reads every Event, each minute. The index on stored
// reads only the old ones.
const pruneQuery = `SELECT COALESCE(MAX(seq), 0) FROM events INDEXED BY events_by_stored WHERE stored < ?`

// prune removes the Events stored before cutoff and moves the horizon past them.
func (s *Store) prune(cutoff time.Time) error {
	var highest uint64
	if err := s.writer.Get(&highest, pruneQuery, cutoff.UnixNano()); err != nil {
		return fmt.Errorf("prune events: %w", err)
	}
	if highest == 0 {
		return nil
	}
	if _, err := s.writer.Exec(`DELETE FROM events WHERE seq <= ?`, highest); err != nil {
		return fmt.Errorf("prune events: %w", err)
	}
	s.mu.Lock()
	s.pruned = max(s.pruned, highest)
	s.mu.Unlock()
	return nil
}

// Sync waits until the fold has applied everything EVENTS holds now, so that a read
// without a resourceVersion reflects every event published before it (as reads of the
// other kinds do).
func (s *Store) Sync(ctx context.Context, js jetstream.JetStream) error {
	ctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	stream, err := js.Stream(ctx, events.StreamEvents)
	if err != nil {
		return fmt.Errorf("read stream %s: %w", events.StreamEvents, err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		return fmt.Errorf("read stream %s: %w", events.StreamEvents, err)
	}
	if info.State.Msgs == 0 {
		return nil
	}
	if err := s.waitApplied(ctx, info.State.LastSeq); err != nil {
		return fmt.Errorf("events folded up to %s, the stream is at %d: %w", s.RV(), info.State.LastSeq, err)
	}
	return nil
}
