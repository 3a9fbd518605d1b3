package readmodel

import (
	"database/sql"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmop/vmop/pkg/events"
	"k8s.io/apimachinery/pkg/labels"
)

// changeRecord is one row of the change log.
type changeRecord struct {
	ID         uint64         `db:"id"`
	Stream     string         `db:"stream"` // of the triggering message
	Seq        uint64         `db:"seq"`
	Type       string         `db:"type"`
	Plural     string         `db:"plural"`
	Namespace  string         `db:"namespace"`
	Name       string         `db:"name"`
	Labels     string         `db:"labels"`      // after the change
	PrevLabels sql.NullString `db:"prev_labels"` // before it; NULL when the object was absent
	Object     []byte         `db:"object"`
	RV         string         `db:"rv"`

	labels, prevLabels labels.Set // decoded once, for the selectors of every watcher
}

// decode parses the label columns for selector matching.
func (c *changeRecord) decode() error {
	var err error
	if c.labels, err = decodeLabels(c.Labels); err != nil {
		return fmt.Errorf("change %d labels: %w", c.ID, err)
	}
	c.prevLabels = nil
	if c.PrevLabels.Valid {
		if c.prevLabels, err = decodeLabels(c.PrevLabels.String); err != nil {
			return fmt.Errorf("change %d labels: %w", c.ID, err)
		}
	}
	return nil
}

// logChange appends a visible change to the log, the object (at version rv) carrying the
// watch event's resourceVersion (eventRV). prev is nil when the object did not exist
// before the change.
func (b *batch) logChange(in inbound, typ string, ref events.Ref, now, prev labels.Set, object []byte, rv position) error {
	erv := eventRV(rv, b.at())
	object, err := withResourceVersion(object, erv)
	if err != nil {
		return fmt.Errorf("log change of %s: %w", ref, err)
	}
	c := changeRecord{
		Stream: in.stream, Seq: in.seq, Type: typ,
		Plural: ref.Plural, Namespace: ref.Namespace, Name: ref.Name,
		Labels: encodeLabels(now), Object: object, RV: erv,
		labels: nonNil(now), prevLabels: prev,
	}
	if prev != nil {
		c.PrevLabels = sql.NullString{String: encodeLabels(prev), Valid: true}
	}
	res, err := b.tx.Exec(`INSERT INTO changes (stream, seq, type, plural, namespace, name, labels, prev_labels, object, rv)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.Stream, c.Seq, c.Type, c.Plural, c.Namespace, c.Name, c.Labels, c.PrevLabels, c.Object, c.RV)
	if err != nil {
		return fmt.Errorf("log change of %s: %w", ref, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("log change of %s: %w", ref, err)
	}
	c.ID = uint64(id)
	b.changes = append(b.changes, c)
	return nil
}

// saveCheckpoints records the stream sequences this batch reached, with the marks of the
// messages there, in its transaction.
func (b *batch) saveCheckpoints() error {
	reached := []struct {
		stream string
		seq    uint64
		msg    jetstream.Msg
	}{{events.StreamSpecs, b.spec, b.specMsg}, {events.StreamStatus, b.status, b.statusMsg}}
	for _, r := range reached {
		if r.seq == 0 {
			continue
		}
		m := events.MarkOf(r.seq, r.msg.Subject(), r.msg.Headers(), r.msg.Data())
		_, err := b.tx.Exec(`INSERT INTO checkpoints (stream, seq, subject, digest) VALUES (?, ?, ?, ?)
			ON CONFLICT (stream) DO UPDATE SET seq = excluded.seq, subject = excluded.subject, digest = excluded.digest`,
			r.stream, m.Seq, m.Subject, m.Digest)
		if err != nil {
			return fmt.Errorf("save %s checkpoint: %w", r.stream, err)
		}
	}
	return nil
}

// pruneLog keeps the newest keep changes and remembers the highest stream sequences it
// dropped, which decide whether a resourceVersion can still be resumed from.
func (b *batch) pruneLog(keep int) error {
	if len(b.changes) == 0 {
		return nil
	}
	newest := b.changes[len(b.changes)-1].ID
	if newest <= uint64(keep) {
		return nil
	}
	cut := newest - uint64(keep)
	_, err := b.tx.Exec(`UPDATE log_horizon SET
			pruned_id = MAX(pruned_id, ?1),
			pruned_spec_seq = MAX(pruned_spec_seq,
				COALESCE((SELECT MAX(seq) FROM changes WHERE id <= ?1 AND stream = ?2), 0)),
			pruned_status_seq = MAX(pruned_status_seq,
				COALESCE((SELECT MAX(seq) FROM changes WHERE id <= ?1 AND stream = ?3), 0))`,
		cut, events.StreamSpecs, events.StreamStatus)
	if err != nil {
		return fmt.Errorf("prune change log: %w", err)
	}
	if _, err := b.tx.Exec(`DELETE FROM changes WHERE id <= ?`, cut); err != nil {
		return fmt.Errorf("prune change log: %w", err)
	}
	return nil
}

// horizon is what pruning removed from the change log.
type horizon struct {
	PrunedID  uint64 `db:"pruned_id"`
	SpecSeq   uint64 `db:"pruned_spec_seq"`
	StatusSeq uint64 `db:"pruned_status_seq"`
}

// covers reports whether every change after p is still in the log.
func (h horizon) covers(p position) bool {
	return h.SpecSeq <= p.spec && h.StatusSeq <= p.status
}

func readHorizon(q sqlx.Queryer) (horizon, error) {
	var h horizon
	if err := sqlx.Get(q, &h, `SELECT pruned_id, pruned_spec_seq, pruned_status_seq FROM log_horizon`); err != nil {
		return h, fmt.Errorf("read change log horizon: %w", err)
	}
	return h, nil
}

// replayPageSize bounds how many logged changes one read transaction of a replay loads.
const replayPageSize = 500

// readChanges returns up to replayPageSize logged changes after id afterID that were
// triggered after p, in log order.
func readChanges(q sqlx.Queryer, afterID uint64, p position) ([]changeRecord, error) {
	var rows []changeRecord
	err := sqlx.Select(q, &rows, `SELECT id, stream, seq, type, plural, namespace, name, labels, prev_labels, object, rv
		FROM changes
		WHERE id > ? AND ((stream = ? AND seq > ?) OR (stream = ? AND seq > ?))
		ORDER BY id LIMIT ?`,
		afterID, events.StreamSpecs, p.spec, events.StreamStatus, p.status, replayPageSize)
	if err != nil {
		return nil, fmt.Errorf("read change log: %w", err)
	}
	for i := range rows {
		if err := rows[i].decode(); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// lastChangeID is the id of the newest logged change, 0 when there is none.
func lastChangeID(q sqlx.Queryer) (uint64, error) {
	var id uint64
	if err := sqlx.Get(q, &id, `SELECT COALESCE(MAX(id), 0) FROM changes`); err != nil {
		return 0, fmt.Errorf("read change log: %w", err)
	}
	return id, nil
}
