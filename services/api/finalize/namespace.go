package finalize

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/services/api/readmodel"
)

// A namespace being deleted goes once it is empty, as in Kubernetes: the finalizer starts
// the deletion of everything in it, each object then going as its own deletion allows
// (finalizers, the services that own it), and every object that goes has its namespace
// considered again.

// empty starts the deletion of each object of the namespace not being deleted yet, and
// tells whether none is left.
func (f *finalizer) empty(ctx context.Context, namespace string) (bool, error) {
	empty := true
	for _, k := range contentKinds() {
		in, err := f.rm.List(readmodel.ListOptions{Plural: k.Plural, Namespace: namespace})
		if err != nil {
			return false, fmt.Errorf("list %s in %s: %w", k.Plural, namespace, err)
		}
		for _, o := range in.Items {
			empty = false
			if o.DeletionRequested {
				continue
			}
			err := f.specs.Delete(ctx, k, namespace, o.Name)
			if err != nil && !apierrors.IsConflict(err) { // a conflict: changed meanwhile, and considered again
				return false, fmt.Errorf("delete %s %s/%s: %w", k.Kind, namespace, o.Name, err)
			}
		}
	}
	return empty, nil
}

// emptied is empty, asked again once the read model holds what the streams hold when it
// finds the namespace empty: a create that passed the namespace check before the deletion
// was folded may have been stored since.
func (f *finalizer) emptied(ctx context.Context, namespace string) (bool, error) {
	if empty, err := f.empty(ctx, namespace); err != nil || !empty {
		return false, err
	}
	// Until it gets there (heavy traffic), it asks again: nothing else would.
	for wait := time.Second; ; wait = min(2*wait, 30*time.Second) {
		err := f.current(ctx)
		if err == nil {
			break
		}
		f.log.Warn("the read model is behind the streams; the namespace waits", "namespace", namespace, "err", err)
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(wait):
		}
	}
	return f.empty(ctx, namespace)
}

// sweep starts the deletion of an object found in a namespace being deleted: one created
// while the namespace's deletion was not folded yet.
func (f *finalizer) sweep(ctx context.Context, k model.Kind, namespace, name string) error {
	if !contentKind(k) {
		return nil
	}
	if _, deleting, err := f.deleting(namespace); err != nil || !deleting {
		return err
	}
	if err := f.specs.Delete(ctx, k, namespace, name); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete %s %s/%s: %w", k.Kind, namespace, name, err)
	}
	return nil
}

// deleting reads the namespace and tells whether it is being deleted.
func (f *finalizer) deleting(namespace string) (readmodel.Object, bool, error) {
	ns, err := f.rm.Get(namespaces.Plural, "", namespace)
	if errors.Is(err, readmodel.ErrNotFound) {
		return ns, false, nil
	}
	return ns, err == nil && ns.DeletionRequested, err
}

// namespacesAgain considers every namespace being deleted.
func (f *finalizer) namespacesAgain(ctx context.Context) error {
	all, err := f.rm.List(readmodel.ListOptions{Plural: namespaces.Plural})
	if err != nil {
		return fmt.Errorf("list namespaces: %w", err)
	}
	for _, ns := range all.Items {
		if ns.DeletionRequested {
			if err := f.consider(ctx, namespaces, ns.JSON); err != nil {
				return err
			}
		}
	}
	return nil
}

// contentGone considers again the namespace of an object of kind k that went.
func (f *finalizer) contentGone(ctx context.Context, k model.Kind, gone []byte) error {
	if !contentKind(k) {
		return nil
	}
	var head struct{ Metadata struct{ Namespace string } }
	if err := json.Unmarshal(gone, &head); err != nil {
		return err
	}
	ns, deleting, err := f.deleting(head.Metadata.Namespace)
	if err != nil || !deleting {
		return err
	}
	if holds, err := f.holdsAny(ns.Name); err != nil || holds {
		return err // the last object to go considers it
	}
	return f.consider(ctx, namespaces, ns.JSON)
}

// holdsAny tells whether an object is left in the namespace, looking at one per kind at
// most: each object that goes asks.
func (f *finalizer) holdsAny(namespace string) (bool, error) {
	for _, k := range contentKinds() {
		in, err := f.rm.List(readmodel.ListOptions{Plural: k.Plural, Namespace: namespace, Limit: 1})
		if err != nil || len(in.Items) > 0 {
			return err == nil, err
		}
	}
	return false, nil
}

// namespaces is the Namespace kind.
var namespaces, _ = model.KindFor(model.GroupCore, "namespaces")

// contentKinds are the kinds whose objects a namespace holds.
func contentKinds() []model.Kind {
	var out []model.Kind
	for _, k := range model.Kinds() {
		if contentKind(k) {
			out = append(out, k)
		}
	}
	return out
}

// contentKind: objects of k live in a namespace, and go with it. The Events are left out:
// nothing stores them as objects.
func contentKind(k model.Kind) bool { return k.Namespaced && !k.ReadOnly }
