package readmodel

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmop/vmop/pkg/events"
	"k8s.io/apimachinery/pkg/labels"
)

// errMalformed marks a message the fold cannot use; it is skipped (and its sequence still
// checkpointed) so that one bad message cannot stall the projection.
var errMalformed = errors.New("malformed message")

// inbound is one stream message as delivered to the fold.
type inbound struct {
	stream  string // events.StreamSpecs or events.StreamStatus
	seq     uint64
	pending uint64 // messages left in the stream after this one when it was delivered
	msg     jetstream.Msg
}

// batch applies messages inside one write transaction and collects the changes it logs.
type batch struct {
	tx                 *sqlx.Tx
	from               position      // the checkpoints before the batch
	spec, status       uint64        // checkpoints reached, 0 = unchanged
	specMsg, statusMsg jetstream.Msg // the messages there, whose marks are saved
	changes            []changeRecord
	cached             []cacheOp // the objects' states after the batch, for the cache
}

// apply folds one message into the read model.
func (b *batch) apply(in inbound) error {
	switch in.stream {
	case events.StreamSpecs:
		b.spec, b.specMsg = in.seq, in.msg
		return b.applySpec(in)
	case events.StreamStatus:
		b.status, b.statusMsg = in.seq, in.msg
		return b.applyStatus(in)
	}
	return fmt.Errorf("stream %s: %w", in.stream, errMalformed)
}

// at is where the fold stands: the message being applied included.
func (b *batch) at() position {
	return position{spec: max(b.from.spec, b.spec), status: max(b.from.status, b.status)}
}

// objectHead is the stored part of an object that applying a message needs.
type objectHead struct {
	UID     string `db:"uid"`
	SpecSeq uint64 `db:"spec_seq"`
	Labels  string `db:"labels"`
	Spec    []byte `db:"spec"`
}

func (b *batch) applySpec(in inbound) error {
	sr, err := events.ParseSpecMsg(in.msg)
	if err != nil {
		return fmt.Errorf("%w: %w", errMalformed, err)
	}
	ref := sr.Ref
	if sr.Body, err = redact(ref.Plural, sr.Body); err != nil {
		return fmt.Errorf("%s: %w: %w", ref, errMalformed, err)
	}
	rec, err := decodeSpec(sr.Body)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", ref, errMalformed, err)
	}
	head, found, err := b.head(ref)
	if err != nil {
		return err
	}
	if sr.Op == events.OpDelete {
		return b.deleteObject(ref, in, rec, head, found)
	}
	stored, err := b.slices(ref)
	if err != nil {
		return err
	}
	m, err := materialise(rec, in.seq, stored)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", ref, errMalformed, err)
	}
	if err := b.upsert(ref, rec, in.seq, sr.Body, m); err != nil {
		return err
	}
	typ, prev := Added, labels.Set(nil)
	if found {
		if prev, err = decodeLabels(head.Labels); err != nil {
			return fmt.Errorf("stored labels of %s: %w", ref, err)
		}
		if head.UID == rec.uid {
			typ = Modified
		}
	}
	return b.logChange(in, typ, ref, rec.labels, prev, m.json, position{in.seq, m.statusSeq})
}

// deleteObject applies a tombstone: the object and its slices go, watchers see DELETED
// with the tombstone's object (its last state) at the tombstone's sequence.
//
// Only the slices of the deleted incarnation go: a slice already stored for a newer
// incarnation of the name (the STATUS fold may run ahead of the SPECS fold) must stay.
func (b *batch) deleteObject(ref events.Ref, in inbound, rec specRecord, head objectHead, found bool) error {
	var m materialised
	if found {
		stored, err := b.slices(ref)
		if err != nil {
			return err
		}
		if m, err = materialise(rec, in.seq, stored); err != nil {
			return fmt.Errorf("%s: %w: %w", ref, errMalformed, err)
		}
		if _, err := b.tx.Exec(`DELETE FROM objects WHERE plural = ? AND namespace = ? AND name = ?`,
			ref.Plural, ref.Namespace, ref.Name); err != nil {
			return fmt.Errorf("delete %s: %w", ref, err)
		}
		b.cached = append(b.cached, cacheOp{plural: ref.Plural, key: objectKey{ref.Namespace, ref.Name}, del: true})
	}
	if _, err := b.tx.Exec(`DELETE FROM slices WHERE plural = ? AND namespace = ? AND name = ? AND uid IN (?, ?)`,
		ref.Plural, ref.Namespace, ref.Name, rec.uid, head.UID); err != nil {
		return fmt.Errorf("delete slices of %s: %w", ref, err)
	}
	if !found {
		return nil // nothing visible was there
	}
	prev, err := decodeLabels(head.Labels)
	if err != nil {
		return fmt.Errorf("stored labels of %s: %w", ref, err)
	}
	return b.logChange(in, Deleted, ref, rec.labels, prev, m.json, position{in.seq, m.statusSeq})
}

// applyStatus stores a slice and, if it concerns the stored object (its uid, or the
// uid of the slice it replaces), re-materialises that object.
func (b *batch) applyStatus(in inbound) error {
	sr, err := events.ParseStatusMsg(in.msg)
	if err != nil {
		return fmt.Errorf("%w: %w", errMalformed, err)
	}
	ref := sr.Ref
	status, err := validStatus(sr.Slice.Status)
	if err != nil {
		return fmt.Errorf("%s slice of %s: %w: %w", sr.Service, ref, errMalformed, err)
	}
	head, found, err := b.head(ref)
	if err != nil {
		return err
	}
	if !found {
		return b.storeSlice(ref, in.seq, sr.Slice, status) // it waits for its object
	}
	stored, err := b.slices(ref)
	if err != nil {
		return err
	}
	stored, oldUID, newer := replaceSlice(stored, sliceRow{
		Service: sr.Service, UID: sr.Slice.UID, Seq: in.seq, Released: sr.Slice.Released, Status: status,
	})
	if !newer {
		return nil // a replay of what is stored already
	}
	if err := b.storeSlice(ref, in.seq, sr.Slice, status); err != nil {
		return err
	}
	if head.UID != sr.Slice.UID && head.UID != oldUID {
		return nil // about another incarnation of the name: invisible
	}
	rec, err := decodeSpec(head.Spec)
	if err != nil {
		return fmt.Errorf("stored spec of %s: %w", ref, err)
	}
	m, err := materialise(rec, head.SpecSeq, stored)
	if err != nil {
		return fmt.Errorf("re-materialise %s: %w", ref, err)
	}
	if err := b.upsert(ref, rec, head.SpecSeq, head.Spec, m); err != nil {
		return err
	}
	return b.logChange(in, Modified, ref, rec.labels, nonNil(rec.labels), m.json, position{head.SpecSeq, m.statusSeq})
}

// replaceSlice puts s in place of its service's stored slice unless that one is at least
// as new; it returns the resulting slices and the uid of the slice it replaced.
func replaceSlice(stored []sliceRow, s sliceRow) (_ []sliceRow, oldUID string, newer bool) {
	for i := range stored {
		if stored[i].Service == s.Service {
			if stored[i].Seq >= s.Seq {
				return stored, "", false
			}
			oldUID, stored[i] = stored[i].UID, s
			return stored, oldUID, true
		}
	}
	return append(stored, s), "", true
}

// storeSlice makes sl (with its validated status) the stored slice of its service.
func (b *batch) storeSlice(ref events.Ref, seq uint64, sl events.Slice, status []byte) error {
	_, err := b.tx.Exec(`INSERT INTO slices (plural, namespace, name, service, uid, seq, generation, released, status)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (plural, namespace, name, service) DO UPDATE SET
			uid = excluded.uid, seq = excluded.seq, generation = excluded.generation,
			released = excluded.released, status = excluded.status
		WHERE excluded.seq > slices.seq`,
		ref.Plural, ref.Namespace, ref.Name, sl.Service, sl.UID, seq, sl.Generation, sl.Released, status)
	if err != nil {
		return fmt.Errorf("store %s slice of %s: %w", sl.Service, ref, err)
	}
	return nil
}

// validStatus accepts a JSON object or nothing (nil), so a stored slice always merges.
func validStatus(raw json.RawMessage) ([]byte, error) {
	trimmed := bytes.TrimSpace(raw)
	switch {
	case len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")):
		return nil, nil
	case trimmed[0] != '{' || !json.Valid(trimmed):
		return nil, errors.New("slice status is not a JSON object")
	}
	return trimmed, nil
}

func (b *batch) head(ref events.Ref) (objectHead, bool, error) {
	var h objectHead
	err := b.tx.Get(&h, `SELECT uid, spec_seq, labels, spec FROM objects
		WHERE plural = ? AND namespace = ? AND name = ?`, ref.Plural, ref.Namespace, ref.Name)
	if errors.Is(err, sql.ErrNoRows) {
		return h, false, nil
	}
	if err != nil {
		return h, false, fmt.Errorf("read %s: %w", ref, err)
	}
	return h, true, nil
}

func (b *batch) slices(ref events.Ref) ([]sliceRow, error) {
	var rows []sliceRow
	err := b.tx.Select(&rows, `SELECT service, uid, seq, released, status FROM slices
		WHERE plural = ? AND namespace = ? AND name = ?`, ref.Plural, ref.Namespace, ref.Name)
	if err != nil {
		return nil, fmt.Errorf("read slices of %s: %w", ref, err)
	}
	return rows, nil
}

func (b *batch) upsert(ref events.Ref, rec specRecord, specSeq uint64, spec []byte, m materialised) error {
	_, err := b.tx.Exec(`INSERT INTO objects
		(plural, namespace, name, uid, spec_seq, status_seq, labels, finalizers, deletion_requested, released, spec, object)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (plural, namespace, name) DO UPDATE SET
			uid = excluded.uid, spec_seq = excluded.spec_seq, status_seq = excluded.status_seq,
			labels = excluded.labels, finalizers = excluded.finalizers,
			deletion_requested = excluded.deletion_requested, released = excluded.released,
			spec = excluded.spec, object = excluded.object`,
		ref.Plural, ref.Namespace, ref.Name, rec.uid, specSeq, m.statusSeq,
		encodeLabels(rec.labels), encodeStrings(rec.finalizers), rec.deletionRequested, encodeStrings(m.released),
		spec, m.json)
	if err != nil {
		return fmt.Errorf("store %s: %w", ref, err)
	}
	b.cached = append(b.cached, cacheOp{plural: ref.Plural, key: objectKey{ref.Namespace, ref.Name},
		obj: cachedObject(ref, rec, specSeq, m)})
	return nil
}

// cachedObject is the Object the stored row reads back as.
func cachedObject(ref events.Ref, rec specRecord, specSeq uint64, m materialised) *Object {
	o := &Object{
		Plural: ref.Plural, Namespace: ref.Namespace, Name: ref.Name, UID: rec.uid,
		SpecSeq: specSeq, StatusSeq: m.statusSeq, RV: position{specSeq, m.statusSeq}.String(),
		Labels: rec.labels, Finalizers: rec.finalizers, DeletionRequested: rec.deletionRequested,
		JSON: m.json,
	}
	if o.Labels == nil {
		o.Labels = map[string]string{}
	}
	if o.Finalizers == nil {
		o.Finalizers = []string{}
	}
	if len(m.released) > 0 {
		o.Released = make(map[string]bool, len(m.released))
		for _, s := range m.released {
			o.Released[s] = true
		}
	}
	return o
}

// encodeLabels is the stored form of a label map: JSON with sorted keys, "{}" when empty.
func encodeLabels(l map[string]string) string {
	if len(l) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(l) // a map[string]string always marshals
	return string(b)
}

// decodeLabels reads the stored form of a label map.
func decodeLabels(s string) (labels.Set, error) {
	l := labels.Set{}
	if err := json.Unmarshal([]byte(s), &l); err != nil {
		return nil, err
	}
	return l, nil
}

// nonNil makes an absent label map an empty one: "existed without labels".
func nonNil(l labels.Set) labels.Set {
	if l == nil {
		return labels.Set{}
	}
	return l
}

// encodeStrings is the stored form of a string list: JSON, "[]" when empty.
func encodeStrings(s []string) string {
	if len(s) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(s) // a []string always marshals
	return string(b)
}
