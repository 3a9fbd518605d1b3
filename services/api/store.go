package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

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
		return 0, staleConflict(t)
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

// startDeletion starts the deletion of obj, whose latest record is rec, as a DELETE does:
// an object nothing holds is gone at once (0 is returned); one with finalizers, services
// that own its kind, or (a namespace) content is marked with deletionTimestamp, and the
// record that marks it is returned. obj's metadata is changed.
func (w *specWriter) startDeletion(ctx context.Context, t target, rec events.SpecRecord, obj map[string]any) (uint64, error) {
	if len(finalizers(obj)) == 0 && len(t.Kind.Owners) == 0 && !t.Kind.IsNamespace() {
		// Gone at once: its tombstone, and its status slices (a quota's, an image's) with it.
		return 0, w.Remove(ctx, t.Kind, t.Namespace, t.Name, obj, rec.Seq)
	}
	m := metadata(obj)
	m["deletionTimestamp"] = time.Now().UTC().Format(time.RFC3339)
	m["deletionGracePeriodSeconds"] = 0
	if g := generation(obj); g > 0 {
		m["generation"] = g + 1 // as Kubernetes marks a deletion: a controller sees a new desire
	}
	return w.append(ctx, t, events.OpPut, obj, rec.Seq)
}

// Delete starts the deletion of an object of a namespace being deleted, as a DELETE
// without options would; one already being deleted, or gone, is left as it is.
func (w *specWriter) Delete(ctx context.Context, k model.Kind, namespace, name string) error {
	t := target{Kind: k, Namespace: namespace, Name: name}
	rec, obj, found, err := w.live(ctx, t)
	if err != nil || !found || metaString(obj, "deletionTimestamp") != "" {
		return err
	}
	_, err = w.startDeletion(ctx, t, rec, obj)
	return err
}

// staleConflict is the 409 of a write made against a version the object has left.
func staleConflict(t target) error {
	return apierrors.NewConflict(t.gr(), t.Name,
		errors.New("the object has been modified; please apply your changes to the latest version and try again"))
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
