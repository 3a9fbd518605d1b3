package storage

import (
	"context"
	"time"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// release deletes what the VM's registration made, the claims and CnsRegisterVolumes the
// VM owns, as Kubernetes' garbage collector deletes an owner's dependents: each is marked
// deleting (deletionTimestamp, compare-and-swap on its record) and the gateway removes it
// once nothing holds it (a claim in use waits until the VM is gone). Objects of the same
// names that the VM does not own are left alone.
func (r *registrar) release(ctx context.Context, vm *model.VirtualMachine) error {
	for _, v := range vm.Spec.Volumes {
		for _, plural := range []string{pluralClaims, pluralRegistered} {
			o, err := readOwned(ctx, r.js, events.Ref{Plural: plural, Namespace: vm.Namespace, Name: claimName(v)})
			if err != nil {
				return err
			}
			if !o.live || !o.ownedBy(string(vm.UID)) || o.header.Metadata.DeletionTimestamp != "" {
				continue
			}
			if err := r.markDeleting(ctx, o); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *registrar) markDeleting(ctx context.Context, o owned) error {
	return editRecord(ctx, r.js, o.ref, o.body, o.seq, "delete with its VM", func(obj map[string]any) error {
		model.Child(obj, "metadata")["deletionTimestamp"] = r.now().UTC().Format(time.RFC3339)
		return nil
	})
}
