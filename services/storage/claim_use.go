package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// users names what holds the claim (pvc-protection): the VMs of its namespace whose
// spec.volumes name it, or else the vSphere VMs with a disk backed by its volume's file
// (attached although no spec names it any more: the detach has not happened yet). Those
// are looked for only when no spec names the claim: the search reads every VM's devices,
// and a VM naming the claim holds it anyway.
func (c *claims) users(ctx context.Context, claim events.Ref, diskPath string) ([]string, error) {
	out, err := c.consumers(ctx, claim)
	if err != nil || len(out) > 0 {
		return out, err
	}
	attached, err := c.volumes.attachedTo(ctx, diskPath)
	if err != nil {
		return nil, err
	}
	for _, name := range attached {
		out = append(out, "vSphere VM "+name)
	}
	return out, nil
}

// consumers names the VMs of the claim's namespace whose spec.volumes name it.
func (c *claims) consumers(ctx context.Context, claim events.Ref) ([]string, error) {
	names, err := c.uses.vmsNaming(ctx, claim)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(names))
	for i, name := range names {
		out[i] = "VirtualMachine " + name
	}
	return out, nil
}

// awaitedRegistration says which VM's registration the claim waits for, if any: a VM not
// upgraded yet whose entry naming the claim sits where its image has a disk (controller
// type, bus and unit) registers that disk as the claim's volume (register_adopt.go); a
// volume made for the claim meanwhile would be a second one. Until the image's disks are
// known, any entry at a full controller slot may be one.
func (c *claims) awaitedRegistration(ctx context.Context, vms []model.VirtualMachine, claim string) (string, error) {
	for _, vm := range vms {
		if model.Upgraded(&vm, model.BuildVersion) {
			continue
		}
		for _, v := range vm.Spec.Volumes {
			at, placed := volumeSlot(v)
			if claimName(v) != claim || v.PersistentVolumeClaim == nil || !placed {
				continue
			}
			disks, known, err := imageDisksOf(ctx, c.js, vm)
			if err != nil {
				return "", err
			}
			if known && !slices.ContainsFunc(disks, func(d model.VirtualMachineImageDiskInfo) bool {
				if d.ControllerType == "" || d.ControllerBusNumber == nil || d.UnitNumber == nil {
					return true // placement unknown: it may be there
				}
				return slot{d.ControllerType, *d.ControllerBusNumber, *d.UnitNumber} == at
			}) {
				continue // a new volume: the claim's own
			}
			where := "where its image has a disk"
			if !known {
				where = "where its image may have a disk (the image's disks are not known yet)"
			}
			return fmt.Sprintf("waiting for VirtualMachine %s's image disks to be registered: its volume %s is at %s, %s, "+
				"which becomes this claim's volume", vm.Name, v.Name, at, where), nil
		}
	}
	return "", nil
}

// imageDisksOf are the disks of the VM's image as the image's status lists them (a disk
// without its full placement may be at any slot); known is false until the status of the
// image as it is now says it is Ready.
func imageDisksOf(ctx context.Context, js jetstream.JetStream, vm model.VirtualMachine) ([]model.VirtualMachineImageDiskInfo, bool, error) {
	if vm.Spec.Image == nil || vm.Spec.Image.Name == "" {
		return nil, true, nil // no image, no image disks
	}
	st, _, problem, err := imageStatus(ctx, js, vm.Namespace, *vm.Spec.Image)
	switch {
	case errors.Is(err, errNoImageStatus), err == nil && (problem != "" || !reconcile.IsTrue(st.Conditions, model.ConditionReady)):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return st.Disks, true, nil
}

// ownersGone reports that the claim has owners and none of them exists any more (garbage
// collection, as Kubernetes' collector does for dependents in the background): an owner is
// gone when its kind has no object of that name, or one with another UID.
func ownersGone(ctx context.Context, js jetstream.JetStream, namespace string, owners []metav1.OwnerReference) (bool, error) {
	if len(owners) == 0 {
		return false, nil
	}
	for _, ow := range owners {
		kind, ok := kindOf(ow)
		if !ok {
			return false, nil // a kind vmop does not serve cannot be seen gone
		}
		ref := events.Ref{Plural: kind.Plural, Name: ow.Name}
		if kind.Namespaced {
			ref.Namespace = namespace
		}
		var head struct{ Metadata metav1.ObjectMeta }
		found, err := reconcile.LastSpecOf(ctx, js, ref, &head)
		if err != nil {
			return false, fmt.Errorf("read owner %s: %w", ref, err)
		}
		if found && head.Metadata.UID == ow.UID {
			return false, nil
		}
	}
	return true, nil
}

// kindOf is the kind an owner reference names, in any version served of its group.
func kindOf(ow metav1.OwnerReference) (model.Kind, bool) {
	gv, err := schema.ParseGroupVersion(ow.APIVersion)
	if err != nil {
		return model.Kind{}, false
	}
	for _, k := range model.Kinds() {
		if k.Kind == ow.Kind && k.Group == gv.Group {
			return k, true
		}
	}
	return model.Kind{}, false
}

// mentions reports whether the record body holds s as a JSON string, spelled as
// encoding/json writes it: the gateway and the services write every record with it, and
// names and UIDs have nothing to escape. A record that does not cannot name s anywhere,
// and need not be decoded.
func mentions(body []byte, s string) bool {
	return bytes.Contains(body, []byte(strconv.Quote(s)))
}
