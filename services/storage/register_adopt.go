package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/model"
)

// A claim the user made beforehand for an image disk (seed, Mapping spec.volumes to Image
// Disks: "use specific, pre-created PVCs for image disks", the storage class "via the
// PVC's storageClassName") becomes the disk's registration: the VM takes it over as it
// would own a claim it made, and the disk is registered as its volume under the policy of
// the claim's class. Only an unbound claim of the disk's access mode can be: a bound one
// has a volume of its own, which is not the disk.

// registeredAs reports whether the claim is the disk's registration already: bound, and
// the VM's registration (registrationOf).
func registeredAs(c model.PersistentVolumeClaim, g registration) bool {
	ow, ok := registrationOf(&c)
	return ok && ow.UID == g.vm.UID && c.Spec.VolumeName != ""
}

// adoptable decodes the claim that an image disk's entry names, which is not its
// registration yet, and says why the registration cannot take it over, if it cannot.
func adoptable(claim owned, g registration) (model.PersistentVolumeClaim, string) {
	var c model.PersistentVolumeClaim
	if err := json.Unmarshal(claim.body, &c); err != nil {
		return c, fmt.Sprintf("claim %s for image disk %s cannot be read: %v", g.claim, describeDisk(g.disk), err)
	}
	switch {
	case c.DeletionTimestamp != nil:
		return c, fmt.Sprintf("claim %s for image disk %s is being deleted", g.claim, describeDisk(g.disk))
	case c.Spec.VolumeName != "":
		return c, fmt.Sprintf("claim %s for image disk %s is bound to volume %s already: a claim made beforehand for an image disk "+
			"must still be unbound (a storage class that binds WaitForFirstConsumer) for the disk to be registered as its volume",
			g.claim, describeDisk(g.disk), c.Spec.VolumeName)
	case !slices.Contains(c.Spec.AccessModes, g.disk.accessMode()):
		// The disk is what it is: a shared (MultiWriter) disk needs a ReadWriteMany claim,
		// any other one a ReadWriteOnce claim.
		return c, fmt.Sprintf("claim %s for image disk %s asks for access modes %v, and the disk is %s", g.claim, describeDisk(g.disk),
			c.Spec.AccessModes, g.disk.accessMode())
	}
	for _, ow := range c.OwnerReferences {
		if ow.Controller != nil && *ow.Controller && ow.UID != g.vm.UID {
			return c, fmt.Sprintf("claim %s for image disk %s is controlled by %s %s", g.claim, describeDisk(g.disk), ow.Kind, ow.Name)
		}
	}
	return c, ""
}

// adopt records the claim c as the VM's image-disk claim, bound to volumeID: the VM's
// controller reference, the data source and labels a registration's claim has, the
// volume, and a request of at least the disk's size, as a registration's claim asks for
// it (quota counts requests). Compare-and-swap on the record read: a concurrent change of
// the claim fails it with a conflict, and the retried reconcile reads it again.
func adopt(ctx context.Context, js jetstream.JetStream, claim owned, c model.PersistentVolumeClaim, g registration, volumeID string) error {
	request := model.ClaimRequest(&c)
	return editRecord(ctx, js, claim.ref, claim.body, claim.seq, "register image disk "+describeDisk(g.disk)+" as", func(obj map[string]any) error {
		meta := obj["metadata"].(map[string]any) // editRecord checked it
		owners, _ := meta["ownerReferences"].([]any)
		owners = slices.DeleteFunc(owners, func(ow any) bool { // the VM owns it once, as its controller
			m, _ := ow.(map[string]any)
			return m["uid"] == string(g.vm.UID)
		})
		meta["ownerReferences"] = append(owners, ownerOf(g.vm))
		setKey(meta, "labels", labelVMName, g.vm.Name)
		setKey(meta, "annotations", annotationDiskBacking, string(g.disk.kind))
		spec, _ := obj["spec"].(map[string]any)
		if spec == nil {
			spec = map[string]any{}
			obj["spec"] = spec
		}
		spec["volumeName"] = volumeID
		spec["dataSourceRef"] = g.dataSource()
		if size := g.disk.device.CapacityInBytes; request.Value() < size {
			resources, _ := spec["resources"].(map[string]any)
			if resources == nil {
				resources = map[string]any{}
				spec["resources"] = resources
			}
			setKey(resources, "requests", model.StorageRequest, sizeQuantity(size).String())
		}
		return nil
	})
}

// setKey sets key in the string map obj[field], making the map if there is none.
func setKey(obj map[string]any, field, key, value string) {
	m, _ := obj[field].(map[string]any)
	if m == nil {
		m = map[string]any{}
		obj[field] = m
	}
	m[key] = value
}
