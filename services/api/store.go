package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// specWriter appends desired state to SPECS. The append is the change event; compare-and-
// swap on the subject's last sequence makes concurrent writers safe across gateways.
type specWriter struct {
	js jetstream.JetStream
}

// live returns the object's latest record and decoded body; found is false when the
// object never existed or its latest record is a tombstone (seq is then still the
// subject's last sequence, the CAS base for a re-create).
func (w *specWriter) live(ctx context.Context, t target) (rec events.SpecRecord, obj map[string]any, found bool, err error) {
	rec, err = events.LastSpec(ctx, w.js, t.ref())
	if errors.Is(err, events.ErrNotFound) || errors.Is(err, events.ErrInvalidRef) {
		// A name no subject can spell (not a DNS name) never named an object.
		return events.SpecRecord{}, nil, false, nil
	}
	if err != nil {
		return rec, nil, false, fmt.Errorf("read spec of %s: %w", t.ref(), err)
	}
	if rec.Op == events.OpDelete {
		return rec, nil, false, nil
	}
	if err := json.Unmarshal(rec.Body, &obj); err != nil {
		return rec, nil, false, fmt.Errorf("decode spec of %s: %w", t.ref(), err)
	}
	return rec, obj, true, nil
}

// append stores obj (or, with op delete, the tombstone of obj) if the subject is still at
// expect; a lost race is a 409 Conflict.
func (w *specWriter) append(ctx context.Context, t target, op string, obj map[string]any, expect uint64) (uint64, error) {
	body, err := json.Marshal(obj)
	if err != nil {
		return 0, fmt.Errorf("encode %s: %w", t.ref(), err)
	}
	seq, err := events.AppendSpec(ctx, w.js, t.ref(), op, body, expect, nil)
	if errors.Is(err, events.ErrConflict) {
		return 0, apierrors.NewConflict(t.gr(), t.Name,
			errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	}
	if tooBig := payloadTooLarge(err); tooBig != nil {
		return 0, tooBig
	}
	if errors.Is(err, events.ErrInvalidRef) { // admission refuses such names first
		return 0, badRequest("%s cannot be stored: %v", t.ref(), err)
	}
	if err != nil {
		return 0, fmt.Errorf("append spec of %s: %w", t.ref(), err)
	}
	return seq, nil
}

// Remove ends an object's life for the finalizer: its tombstone, if the subject is still at
// expect, then its status slices purged.
func (w *specWriter) Remove(ctx context.Context, k model.Kind, namespace, name string, obj map[string]any, expect uint64) error {
	t := target{Kind: k, Namespace: namespace, Name: name}
	if _, err := w.append(ctx, t, events.OpDelete, obj, expect); err != nil {
		return err
	}
	return events.PurgeStatus(ctx, w.js, t.ref())
}
