package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/services/api/readmodel"
)

// finalizer ends deletions: an object marked with deletionTimestamp is removed (a
// tombstone appended to SPECS) once no finalizer remains and every service that owns its
// kind has released it. Several gateways may race; the CAS lets one win.
type finalizer struct {
	specs *specWriter
	rm    *readmodel.Store
	log   *slog.Logger
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
		for ch := range changes {
			if ch.Type == "DELETED" {
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
	if err := json.Unmarshal(changed, &head); err != nil || head.Metadata.DeletionTimestamp == "" {
		return err
	}
	o, err := f.rm.Get(k.Plural, head.Metadata.Namespace, head.Metadata.Name)
	if errors.Is(err, readmodel.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if !o.DeletionRequested || len(o.Finalizers) > 0 {
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
	delete(metadata(obj), "resourceVersion")
	t := target{Kind: k, Namespace: head.Metadata.Namespace, Name: head.Metadata.Name}
	if _, err := f.specs.append(ctx, t, events.OpDelete, obj, o.SpecSeq); err != nil {
		if apierrors.IsConflict(err) {
			return nil // changed meanwhile: the newer change is considered on its own
		}
		return err
	}
	return events.PurgeStatus(ctx, f.specs.js, t.ref())
}
