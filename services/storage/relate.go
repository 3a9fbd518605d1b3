package storage

import (
	"context"
	"encoding/json"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// claimsOfVM is the claim loop's Relate: a VM's change concerns the claims its
// spec.volumes name (a claim it starts using, a WaitForFirstConsumer claim waiting for
// it), not every claim of the namespace. Its removal concerns them all: the claims it
// owned are garbage now, and ownership is recorded in the claims; so does a record that
// cannot be read. A claim the VM stopped naming matters only while it is deleted, and
// that one looks again on its own (inUsePoll).
func claimsOfVM(_ context.Context, rec events.SpecRecord) ([]string, bool, error) {
	var vm model.VirtualMachine
	if rec.Op == events.OpDelete || json.Unmarshal(rec.Body, &vm) != nil {
		return nil, true, nil
	}
	return claimsNamed(vm), false, nil
}

// claimsNamed are the claims the VM's spec.volumes name.
func claimsNamed(vm model.VirtualMachine) []string {
	var names []string
	for _, v := range vm.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName != "" {
			names = append(names, v.PersistentVolumeClaim.ClaimName)
		}
	}
	return names
}

// vmsOfClaim is the VM loop's Relate: a claim's change (bound, grown) concerns the VMs
// that own it (a VM's image-disk and instance-storage claims) or, for a claim no VM owns,
// those whose spec.volumes name it, read from the VMs' records (vmClaims, not a reconcile each). A claim's removal concerns the VMs that name it (its tombstone names
// no owner; an owner that still exists names it too). An unreadable record and any other
// related kind concern every VM of the namespace.
func vmsOfClaim(uses *vmClaims) func(context.Context, events.SpecRecord) ([]string, bool, error) {
	return func(ctx context.Context, rec events.SpecRecord) ([]string, bool, error) {
		if rec.Ref.Plural != pluralClaims {
			return nil, true, nil
		}
		if rec.Op == events.OpDelete {
			naming, err := uses.vmsNaming(ctx, rec.Ref)
			return naming, false, err
		}
		var claim model.PersistentVolumeClaim
		if err := json.Unmarshal(rec.Body, &claim); err != nil {
			return nil, true, nil
		}
		var owners []string
		for _, ow := range claim.OwnerReferences {
			if kind, ok := kindOf(ow); ok && kind.Plural == "virtualmachines" {
				owners = append(owners, ow.Name)
			}
		}
		if len(owners) > 0 {
			return owners, false, nil
		}
		naming, err := uses.vmsNaming(ctx, rec.Ref)
		return naming, false, err
	}
}
