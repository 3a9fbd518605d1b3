package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vmop/vmop/pkg/events"
)

// The read model keeps no Secret values (readmodel/redact.go): a Secret is served with the
// data and kubectl's last-applied annotation of the SPECS record its resourceVersion
// names, read only for a caller already authorized in its namespace.
const (
	pluralSecrets = "secrets"
	lastApplied   = "kubectl.kubernetes.io/last-applied-configuration"
)

// reveal returns obj, a served object of plural whose latest record is at specSeq, with a
// Secret's data and last-applied annotation restored; other kinds' objects unchanged.
func (s *server) reveal(ctx context.Context, plural string, obj []byte, specSeq uint64) ([]byte, error) {
	if plural != pluralSecrets {
		return obj, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(obj, &top); err != nil {
		return nil, fmt.Errorf("decode secret: %w", err)
	}
	var meta struct{ Namespace, Name string }
	if err := json.Unmarshal(top["metadata"], &meta); err != nil {
		return nil, fmt.Errorf("decode secret metadata: %w", err)
	}
	ref := events.Ref{Plural: plural, Namespace: meta.Namespace, Name: meta.Name}
	rec, err := events.SpecAt(ctx, s.specs.js, ref, specSeq)
	if errors.Is(err, events.ErrNotFound) {
		// The stream keeps a bounded history per object: a watch replaying an old version
		// gets the newest data.
		rec, err = events.LastSpec(ctx, s.specs.js, ref)
	}
	if err != nil {
		return nil, fmt.Errorf("read the data of %s: %w", ref, err)
	}
	var stored struct {
		Data     json.RawMessage `json:"data"`
		Metadata struct {
			Annotations map[string]json.RawMessage `json:"annotations"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(rec.Body, &stored); err != nil {
		return nil, fmt.Errorf("decode the data of %s: %w", ref, err)
	}
	delete(top, "data")
	if len(stored.Data) > 0 {
		top["data"] = stored.Data
	}
	if la, ok := stored.Metadata.Annotations[lastApplied]; ok {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(top["metadata"], &m); err != nil {
			return nil, fmt.Errorf("decode secret metadata: %w", err)
		}
		var ann map[string]json.RawMessage
		_ = json.Unmarshal(m["annotations"], &ann) // absent: none but this one
		if ann == nil {
			ann = map[string]json.RawMessage{}
		}
		ann[lastApplied] = la
		if m["annotations"], err = json.Marshal(ann); err != nil {
			return nil, err
		}
		if top["metadata"], err = json.Marshal(m); err != nil {
			return nil, err
		}
	}
	return json.Marshal(top)
}
