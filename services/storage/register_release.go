package storage

import (
	"context"
	"time"

	"github.com/vmop/vmop/pkg/model"
)

// release deletes what the VM's registration made, the claims and CnsRegisterVolumes the
// VM owns, as Kubernetes' garbage collector deletes an owner's dependents: each is marked
// deleting (deletionTimestamp, compare-and-swap on its record) and the gateway removes it
// once nothing holds it (a claim in use waits until the VM is gone). They are found by
// their owner, as the garbage collector finds them, not by spec.volumes: an image disk's
// entry removed from the VM leaves its claim owned by the VM (the seed's Removing
// Additional Image Disks). Objects the VM does not own are left alone.
func (r *registrar) release(ctx context.Context, vm *model.VirtualMachine) error {
	for _, plural := range []string{pluralClaims, pluralRegistered} {
		owned, err := r.uses.ownedBy(ctx, plural, vm.Namespace, string(vm.UID))
		if err != nil {
			return err
		}
		for _, o := range owned {
			if o.header.Metadata.DeletionTimestamp != "" {
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
