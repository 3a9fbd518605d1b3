package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// The claim loop writes SPECS, as placement records a VM's zone: it appends the record it
// reconciled, changed, compare-and-swap on that record, generation unchanged. A concurrent
// change fails it with events.ErrConflict, and the retried reconcile sees the newer record.

// recordVolume binds the claim to its CNS volume: spec.volumeName is the volume's ID.
func recordVolume(ctx context.Context, js jetstream.JetStream, o reconcile.Object, id string) error {
	return editSpec(ctx, js, o, "record volume "+id, func(obj map[string]any) {
		spec, _ := obj["spec"].(map[string]any)
		if spec == nil {
			spec = map[string]any{}
			obj["spec"] = spec
		}
		spec["volumeName"] = id
	})
}

// dropProtection removes the pvc-protection finalizer of a claim no VM uses any more.
func dropProtection(ctx context.Context, js jetstream.JetStream, o reconcile.Object) error {
	var head struct {
		Metadata struct{ Finalizers []string }
	}
	if err := json.Unmarshal(o.Spec.Body, &head); err != nil || !slices.Contains(head.Metadata.Finalizers, model.FinalizerPVCProtection) {
		return err
	}
	return editSpec(ctx, js, o, "remove finalizer "+model.FinalizerPVCProtection, func(obj map[string]any) {
		meta, _ := obj["metadata"].(map[string]any)
		list, _ := meta["finalizers"].([]any)
		list = slices.DeleteFunc(list, func(f any) bool { return f == model.FinalizerPVCProtection })
		if len(list) == 0 {
			delete(meta, "finalizers")
		} else {
			meta["finalizers"] = list
		}
	})
}

// markDeleted requests the claim's deletion, as the gateway's DELETE does: the claim is
// released like any deleted one.
func markDeleted(ctx context.Context, js jetstream.JetStream, o reconcile.Object, now time.Time) error {
	return editSpec(ctx, js, o, "delete the claim, whose owners are gone", func(obj map[string]any) {
		meta, _ := obj["metadata"].(map[string]any)
		meta["deletionTimestamp"] = now.UTC().Format(time.RFC3339)
		meta["deletionGracePeriodSeconds"] = 0
	})
}

func editSpec(ctx context.Context, js jetstream.JetStream, o reconcile.Object, what string, edit func(obj map[string]any)) error {
	return editRecord(ctx, js, o.Ref, o.Spec.Body, o.Spec.Seq, what, func(obj map[string]any) error {
		edit(obj)
		return nil
	})
}

// editRecord appends ref's record body (SPECS sequence seq) with the edit applied,
// compare-and-swap on seq: a concurrent change fails with a conflict and the retried
// reconcile starts from the newer record. Numbers elsewhere in the object stay as written.
func editRecord(ctx context.Context, js jetstream.JetStream, ref events.Ref, body []byte, seq uint64, what string, edit func(obj map[string]any) error) error {
	obj, err := model.DecodeObject(body)
	if err != nil {
		return fmt.Errorf("%w: decode %s: %v", events.ErrPermanent, ref, err)
	}
	if _, ok := obj["metadata"].(map[string]any); !ok {
		return fmt.Errorf("%w: %s has no metadata", events.ErrPermanent, ref)
	}
	if err := edit(obj); err != nil {
		return err
	}
	edited, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("%w: encode %s: %v", events.ErrPermanent, ref, err)
	}
	if _, err := events.AppendSpec(ctx, js, ref, events.OpPut, edited, seq, nil); err != nil {
		return fmt.Errorf("%s of %s: %w", what, ref, err)
	}
	return nil
}
