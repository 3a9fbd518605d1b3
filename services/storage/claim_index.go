package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// vmClaims finds the VMs whose spec.volumes name a claim, and the objects a VM owns, from
// in-memory indexes of their records (events.SpecIndex): a claim's reconcile, a claim's
// change (relate.go) and a VM's deletion ask, and reading every record of the namespace
// for each made them cost as much as the namespace is large. The records found are read
// again from the stream before anything is decided on them.
type vmClaims struct {
	js     jetstream.JetStream
	vms    *events.SpecIndex[namedClaims]
	owners map[string]*events.SpecIndex[[]string] // claims' and CnsRegisterVolumes' owner UIDs, by plural
}

func newVMClaims(js jetstream.JetStream) *vmClaims {
	return &vmClaims{js: js, vms: events.NewSpecIndex(js, "virtualmachines", namedClaimsOf),
		owners: map[string]*events.SpecIndex[[]string]{
			pluralClaims:     events.NewSpecIndex(js, pluralClaims, ownerUIDsOf),
			pluralRegistered: events.NewSpecIndex(js, pluralRegistered, ownerUIDsOf),
		}}
}

// namedClaims is what the index keeps of a VM's record: the claims its spec.volumes name,
// or that the record could not be read.
type namedClaims struct {
	names      []string
	unreadable bool
}

func namedClaimsOf(rec events.SpecRecord) (namedClaims, bool) {
	var vm struct {
		Spec struct {
			Volumes []model.VirtualMachineVolume `json:"volumes"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(rec.Body, &vm); err != nil {
		return namedClaims{unreadable: true}, true
	}
	var out namedClaims
	for _, v := range vm.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName != "" {
			out.names = append(out.names, v.PersistentVolumeClaim.ClaimName)
		}
	}
	return out, true
}

// ownerUIDsOf is what the index keeps of a claim's or CnsRegisterVolume's record: the
// UIDs of its owners (none for an unreadable record: no VM can be told to own it).
func ownerUIDsOf(rec events.SpecRecord) ([]string, bool) {
	o, err := ownedFrom(rec)
	if err != nil {
		return nil, true
	}
	uids := make([]string, len(o.header.Metadata.OwnerReferences))
	for i, r := range o.header.Metadata.OwnerReferences {
		uids[i] = string(r.UID)
	}
	return uids, true
}

// vmsWithClaim are the VMs of the claim's namespace whose spec.volumes name it, each as
// its newest record says.
func (x *vmClaims) vmsWithClaim(ctx context.Context, claim events.Ref) ([]model.VirtualMachine, error) {
	indexed, err := x.vms.In(ctx, claim.Namespace)
	if err != nil {
		return nil, err
	}
	var out []model.VirtualMachine
	for _, o := range indexed {
		if !o.Value.unreadable && !slices.Contains(o.Value.names, claim.Name) {
			continue
		}
		rec, err := events.LastSpec(ctx, x.js, o.Ref)
		if errors.Is(err, events.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", o.Ref, err)
		}
		if rec.Op != events.OpPut {
			continue
		}
		var vm model.VirtualMachine
		if err := json.Unmarshal(rec.Body, &vm); err != nil {
			if !mentions(rec.Body, claim.Name) {
				continue // it cannot name the claim
			}
			return nil, fmt.Errorf("decode %s: %w", o.Ref, err)
		}
		if slices.Contains(claimsNamed(vm), claim.Name) {
			vm.Name = o.Ref.Name
			out = append(out, vm)
		}
	}
	return out, nil
}

// vmsNaming are the names of the VMs of the claim's namespace whose spec.volumes name it.
func (x *vmClaims) vmsNaming(ctx context.Context, claim events.Ref) ([]string, error) {
	vms, err := x.vmsWithClaim(ctx, claim)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(vms))
	for i, vm := range vms {
		out[i] = vm.Name
	}
	return out, nil
}

// ownedBy are the objects of plural in the namespace whose owners include the VM of uid,
// each as its newest record says.
func (x *vmClaims) ownedBy(ctx context.Context, plural, namespace, uid string) ([]owned, error) {
	indexed, err := x.owners[plural].In(ctx, namespace)
	if err != nil {
		return nil, err
	}
	var out []owned
	for _, o := range indexed {
		if !slices.Contains(o.Value, uid) {
			continue
		}
		rec, err := readOwned(ctx, x.js, o.Ref)
		if errors.Is(err, events.ErrPermanent) {
			continue // a record no owner can be read from is no VM's
		}
		if err != nil {
			return nil, err
		}
		if rec.live && rec.ownedBy(uid) {
			out = append(out, rec)
		}
	}
	return out, nil
}
