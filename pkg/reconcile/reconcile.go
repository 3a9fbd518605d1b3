// Package reconcile is the loop every vmop service runs (DESIGN §5): a durable consumer
// of an object kind's changes hands each object to the service's level-triggered
// reconcile function, one object at a time and parallel across objects, and publishes the
// service's whole status slice before the message is acknowledged.
package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
)

// Object is the latest desired state of one object, read when its turn comes (never the
// possibly stale payload of the message that woke us).
type Object struct {
	Ref  events.Ref
	Spec events.SpecRecord
	Meta Meta
}

// Meta is the part of metadata every reconciler needs.
type Meta struct {
	UID               string `json:"uid"`
	Generation        int64  `json:"generation"`
	DeletionTimestamp string `json:"deletionTimestamp"`
}

// Deleting reports that the object is marked for deletion: the service tears down its
// part and returns Released.
func (o Object) Deleting() bool { return o.Meta.DeletionTimestamp != "" }

// Result is the service's whole slice for the object.
type Result struct {
	Status   any  // this service's part of .status; nil for none
	Released bool // the service finished its deletion work
}

// Func reconciles one object. It is called again for every change of the object, so it
// must be idempotent; an error is retried with backoff (events.ErrPermanent stops).
type Func func(ctx context.Context, o Object) (Result, error)

// Config names the service and what it watches.
type Config struct {
	Service string
	Plural  string // the kind whose objects are reconciled
	Workers int    // objects reconciled in parallel
}

// Run consumes until ctx ends. It ensures the streams first: services may start before
// the gateway does.
func Run(ctx context.Context, js jetstream.JetStream, cfg Config, f Func) error {
	if err := events.Setup(ctx, js); err != nil {
		return fmt.Errorf("set up streams: %w", err)
	}
	cc := events.ConsumerConfig{
		Stream:         events.StreamSpecs,
		Durable:        events.Durable(cfg.Service),
		FilterSubjects: []string{events.SpecFilter(cfg.Plural)},
		Workers:        max(cfg.Workers, 1),
	}
	h := func(ctx context.Context, msg jetstream.Msg) error {
		ref, err := events.ParseSpecSubject(msg.Subject())
		if err != nil {
			return fmt.Errorf("%w: %v", events.ErrPermanent, err)
		}
		return reconcileOne(ctx, js, cfg.Service, ref, f)
	}
	return events.Consume(ctx, js, cc, events.ObjectKey, h)
}

// reconcileOne reads the latest spec, reconciles and publishes the slice. A tombstone
// or a missing object needs nothing: the gateway only removes objects we released.
func reconcileOne(ctx context.Context, js jetstream.JetStream, service string, ref events.Ref, f Func) error {
	rec, err := events.LastSpec(ctx, js, ref)
	if errors.Is(err, events.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read spec of %s: %w", ref, err)
	}
	if rec.Op == events.OpDelete {
		return nil
	}
	var head struct{ Metadata Meta }
	if err := json.Unmarshal(rec.Body, &head); err != nil {
		return fmt.Errorf("%w: decode spec of %s: %v", events.ErrPermanent, ref, err)
	}
	o := Object{Ref: ref, Spec: rec, Meta: head.Metadata}
	res, err := f(ctx, o)
	if err != nil {
		return err
	}
	slice := events.Slice{Service: service, UID: o.Meta.UID, Generation: o.Meta.Generation, Released: res.Released}
	if res.Status != nil {
		if slice.Status, err = json.Marshal(res.Status); err != nil {
			return fmt.Errorf("%w: encode status of %s: %v", events.ErrPermanent, ref, err)
		}
	}
	if _, err := events.PublishStatus(ctx, js, ref, slice); err != nil {
		return fmt.Errorf("publish status of %s: %w", ref, err)
	}
	return nil
}
