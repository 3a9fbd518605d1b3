package placement

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// setZoneLabel records the chosen zone in the VM's metadata (api-rules §4: "VM service
// after placement"), the one place where placement writes SPECS: it appends the record it
// reconciled with the label added, compare-and-swap on that record, generation unchanged
// (metadata is not spec). A concurrent change makes it fail with events.ErrConflict, and
// the retried reconcile sees the newer record.
func (r *reconciler) setZoneLabel(ctx context.Context, o reconcile.Object, zone string) error {
	body, err := withLabel(o.Spec.Body, model.LabelZone, zone)
	if err != nil {
		return fmt.Errorf("%w: label %s: %v", events.ErrPermanent, o.Ref, err)
	}
	if _, err := events.AppendSpec(ctx, r.js, o.Ref, events.OpPut, body, o.Spec.Seq, nil); err != nil {
		return fmt.Errorf("set zone label of %s: %w", o.Ref, err)
	}
	return nil
}

// withLabel returns the object body with metadata.labels[key] = value; everything else is
// kept as it was (raw JSON, so numbers and unknown fields survive).
func withLabel(body []byte, key, value string) ([]byte, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, err
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := obj["metadata"]; ok {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, fmt.Errorf("metadata: %w", err)
		}
	}
	labels := map[string]string{}
	if raw, ok := meta["labels"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &labels); err != nil {
			return nil, fmt.Errorf("metadata.labels: %w", err)
		}
	}
	labels[key] = value
	var err error
	if meta["labels"], err = json.Marshal(labels); err != nil {
		return nil, err
	}
	if obj["metadata"], err = json.Marshal(meta); err != nil {
		return nil, err
	}
	return json.Marshal(obj)
}
