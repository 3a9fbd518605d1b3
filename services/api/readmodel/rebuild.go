package readmodel

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmop/vmop/pkg/events"
)

// verifyCheckpoints checks that the streams still hold the messages the checkpoints were
// taken at. When one does not (the stream was recreated, restored from an older copy, or
// lost acknowledged writes that the database kept), the projection is of another history:
// it is emptied, under a new epoch, and the fold rebuilds it from the streams instead of
// resuming at a position that means something else now (startedOver).
func (s *Store) verifyCheckpoints(ctx context.Context, js jetstream.JetStream) (startedOver bool, _ error) {
	for _, stream := range []string{events.StreamSpecs, events.StreamStatus} {
		mark, err := checkpoint(s.writer, stream)
		if err != nil {
			return false, err
		}
		err = events.CheckMark(ctx, js, stream, mark)
		if errors.Is(err, events.ErrDiverged) {
			s.opts.logger.Warn("read model no longer matches the streams: rebuilding it", "err", err)
			return true, s.startOver()
		}
		if err != nil {
			return false, fmt.Errorf("%w: verify read model checkpoint: %w", events.ErrFeed, err)
		}
	}
	return false, nil
}

// startOver empties the projection under a new epoch and ends every watch: what they
// were told may belong to the other history. The change log keeps its ids growing, so a
// resumed watch cannot mistake a new change for one it saw; the fold that follows hides
// what it rebuilds from resumption (see [Store.Fold]).
func (s *Store) startOver() error {
	epoch := rand.Text()
	tx, err := s.writer.Beginx()
	if err != nil {
		return fmt.Errorf("rebuild read model: %w", err)
	}
	defer tx.Rollback()
	for _, stmt := range []string{
		`DELETE FROM objects`,
		`DELETE FROM slices`,
		`DELETE FROM checkpoints`,
		`UPDATE log_horizon SET pruned_id = MAX(pruned_id, COALESCE((SELECT MAX(id) FROM changes), 0)),
			pruned_spec_seq = 0, pruned_status_seq = 0`,
		`DELETE FROM changes`,
	} {
		if _, err := tx.Exec(stmt); err != nil {
			return fmt.Errorf("rebuild read model: %w", err)
		}
	}
	if _, err := tx.Exec(`UPDATE epoch SET value = ?`, epoch); err != nil {
		return fmt.Errorf("rebuild read model: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("rebuild read model: %w", err)
	}
	s.cache.reset(position{}, 0)
	s.progress.restore(0, 0)
	s.epoch.Store(&epoch)
	s.hub.endAll()
	return nil
}

// hideFromResumption records, while a rebuilt projection catches up, that the changes up
// to p are not in the log as they happened: a watch resuming from a resourceVersion before
// p (of the other history) gets [ErrGone] and lists again, as after pruning.
func (b *batch) hideFromResumption(p position) error {
	_, err := b.tx.Exec(`UPDATE log_horizon SET
			pruned_spec_seq = MAX(pruned_spec_seq, ?), pruned_status_seq = MAX(pruned_status_seq, ?)`,
		p.spec, p.status)
	if err != nil {
		return fmt.Errorf("advance change log horizon: %w", err)
	}
	return nil
}
