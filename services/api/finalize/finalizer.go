// Package finalize ends deletions once nothing holds them any more.
package finalize

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/services/api/readmodel"
)

// Objects is the read model as the finalizer follows it.
type Objects interface {
	Watch(ctx context.Context, o readmodel.WatchOptions) (<-chan readmodel.Change, error)
	Get(plural, namespace, name string) (readmodel.Object, error)
	List(o readmodel.ListOptions) (readmodel.ListResult, error)
}

// Specs removes objects from the desired state.
type Specs interface {
	// Remove appends the tombstone of obj if the object's SPECS subject is still at expect
	// (a lost race is a Conflict), then purges its status.
	Remove(ctx context.Context, k model.Kind, namespace, name string, obj map[string]any, expect uint64) error
	// Delete starts an object's deletion as a DELETE does, unless it has started already.
	Delete(ctx context.Context, k model.Kind, namespace, name string) error
}

// finalizer ends deletions: an object marked with deletionTimestamp is removed (a
// tombstone appended to SPECS) once no finalizer remains and every service that owns its
// kind has released it. Several gateways may race; the CAS lets one win.
type finalizer struct {
	specs   Specs
	rm      Objects
	current func(context.Context) error
	log     *slog.Logger
}

// Start follows every kind until ctx ends, removing each object whose deletion nothing
// holds any more. current waits until the read model holds what the streams hold.
func Start(ctx context.Context, specs Specs, rm Objects, current func(context.Context) error, log *slog.Logger) {
	(&finalizer{specs: specs, rm: rm, current: current, log: log}).run(ctx)
}

func (f *finalizer) run(ctx context.Context) {
	for _, k := range model.Kinds() {
		go f.watchKind(ctx, k)
	}
}

// watchKind looks at every change of the kind; it re-watches when the read model drops
// a slow watcher, so no deletion is forgotten.
func (f *finalizer) watchKind(ctx context.Context, k model.Kind) {
	for ctx.Err() == nil {
		changes, err := f.rm.Watch(ctx, readmodel.WatchOptions{Plural: k.Plural, SendInitial: true})
		if err != nil {
			f.log.Error("finalizer watch", "kind", k.Kind, "err", err)
			return
		}
		if contentKind(k) {
			// The initial events are what is there: what went while no watch was in place
			// asks for its namespace here.
			if err := f.namespacesAgain(ctx); err != nil {
				f.log.Error("finalize namespaces", "kind", k.Kind, "err", err)
			}
		}
		for ch := range changes {
			if ch.Type == readmodel.Deleted {
				if err := f.contentGone(ctx, k, ch.Object); err != nil {
					f.log.Error("finalize namespace", "kind", k.Kind, "err", err)
				}
				continue
			}
			if err := f.consider(ctx, k, ch.Object); err != nil {
				f.log.Error("finalize", "kind", k.Kind, "err", err)
			}
		}
	}
}

func (f *finalizer) consider(ctx context.Context, k model.Kind, changed []byte) error {
	var head struct {
		Metadata struct {
			Name, Namespace, DeletionTimestamp string
		}
	}
	if err := json.Unmarshal(changed, &head); err != nil {
		return err
	}
	if head.Metadata.DeletionTimestamp == "" {
		return f.sweep(ctx, k, head.Metadata.Namespace, head.Metadata.Name)
	}
	o, err := f.rm.Get(k.Plural, head.Metadata.Namespace, head.Metadata.Name)
	if errors.Is(err, readmodel.ErrNotFound) {
		return nil
	}
	if err != nil || !o.DeletionRequested {
		return err
	}
	if k.IsNamespace() {
		// Its content goes whatever finalizers hold the namespace itself.
		if empty, err := f.emptied(ctx, o.Name); err != nil || !empty {
			return err
		}
	}
	if len(o.Finalizers) > 0 {
		return nil
	}
	for _, owner := range k.Owners {
		if !o.Released[owner] {
			return nil
		}
	}
	var obj map[string]any
	if err := json.Unmarshal(o.JSON, &obj); err != nil {
		return fmt.Errorf("decode %s/%s: %w", k.Plural, head.Metadata.Name, err)
	}
	delete(obj, "status")
	if meta, ok := obj["metadata"].(map[string]any); ok {
		delete(meta, "resourceVersion")
	}
	err = f.specs.Remove(ctx, k, head.Metadata.Namespace, head.Metadata.Name, obj, o.SpecSeq)
	if apierrors.IsConflict(err) {
		return nil // changed meanwhile: the newer change is considered on its own
	}
	return err
}
