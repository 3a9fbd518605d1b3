package readmodel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/vmop/vmop/pkg/model"
)

// specRecord is a decoded SPECS record body: the object without status.
type specRecord struct {
	fields            map[string]json.RawMessage // top level: apiVersion, kind, metadata, spec, ...
	meta              map[string]json.RawMessage
	uid               string
	labels            map[string]string
	finalizers        []string
	deletionRequested bool
}

// decodeSpec decodes a SPECS body; an object without metadata is malformed.
func decodeSpec(body []byte) (specRecord, error) {
	var rec specRecord
	if err := json.Unmarshal(body, &rec.fields); err != nil {
		return rec, fmt.Errorf("decode object: %w", err)
	}
	rawMeta, ok := rec.fields["metadata"]
	if !ok {
		return rec, errors.New("decode object: no metadata")
	}
	if err := json.Unmarshal(rawMeta, &rec.meta); err != nil {
		return rec, fmt.Errorf("decode metadata: %w", err)
	}
	var deletion json.RawMessage
	err := errors.Join(
		decodeField(rec.meta, "uid", &rec.uid),
		decodeField(rec.meta, "labels", &rec.labels),
		decodeField(rec.meta, "finalizers", &rec.finalizers),
		decodeField(rec.meta, "deletionTimestamp", &deletion),
	)
	if err != nil {
		return rec, fmt.Errorf("decode metadata: %w", err)
	}
	rec.deletionRequested = len(deletion) > 0 && string(deletion) != "null"
	return rec, nil
}

// decodeField decodes m[key] into v when present.
func decodeField(m map[string]json.RawMessage, key string, v any) error {
	raw, ok := m[key]
	if !ok {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// sliceRow is one stored status slice.
type sliceRow struct {
	Service  string `db:"service"`
	UID      string `db:"uid"`
	Seq      uint64 `db:"seq"`
	Released bool   `db:"released"`
	Status   []byte `db:"status"`
}

// materialised is an object as served, with the facts derived from its slices.
type materialised struct {
	json      []byte
	statusSeq uint64
	released  []string // sorted
}

// materialise builds the served object from its spec record and its stored slices: the
// status is the merge of the slices whose uid is the object's, in service order; a status
// the record itself carries (it should not) is the base they merge onto. The result is a
// pure function of its inputs, which is what makes a rebuild identical.
func materialise(rec specRecord, specSeq uint64, stored []sliceRow) (materialised, error) {
	var m materialised
	statuses := []json.RawMessage{rec.namespaceStatus(), rec.fields["status"]}
	for _, s := range sortedByService(stored) {
		if rec.uid == "" || s.UID != rec.uid {
			continue
		}
		statuses = append(statuses, s.Status)
		m.statusSeq = max(m.statusSeq, s.Seq)
		if s.Released {
			m.released = append(m.released, s.Service)
		}
	}
	status, err := model.MergeStatus(statuses)
	if err != nil {
		return m, fmt.Errorf("merge status: %w", err)
	}
	rv, err := json.Marshal(position{spec: specSeq, status: m.statusSeq}.String())
	if err != nil {
		return m, err
	}
	meta := maps.Clone(rec.meta)
	meta["resourceVersion"] = rv
	top := maps.Clone(rec.fields)
	if top["metadata"], err = encodeJSON(meta); err != nil {
		return m, err
	}
	delete(top, "status")
	if status != nil {
		top["status"] = status
	}
	m.json, err = encodeJSON(top)
	return m, err
}

// withResourceVersion is the materialised object with another metadata.resourceVersion.
// Only the top level and the metadata are decoded: the rest is copied as it is.
func withResourceVersion(object []byte, rv string) ([]byte, error) {
	var top, meta map[string]json.RawMessage
	if err := json.Unmarshal(object, &top); err != nil {
		return nil, fmt.Errorf("decode object: %w", err)
	}
	if err := json.Unmarshal(top["metadata"], &meta); err != nil {
		return nil, fmt.Errorf("decode metadata: %w", err)
	}
	var err error
	if meta["resourceVersion"], err = json.Marshal(rv); err != nil {
		return nil, err
	}
	if top["metadata"], err = encodeJSON(meta); err != nil {
		return nil, err
	}
	return encodeJSON(top)
}

func sortedByService(stored []sliceRow) []sliceRow {
	return slices.SortedFunc(slices.Values(stored), func(a, b sliceRow) int {
		return strings.Compare(a.Service, b.Service)
	})
}

// encodeJSON is json.Marshal without HTML escaping; map keys come out sorted, so the
// bytes are deterministic.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode object: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
