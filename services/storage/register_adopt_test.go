package storage

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	cnstypes "github.com/vmware/govmomi/cns/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// A claim made beforehand for an image disk (seed, Mapping spec.volumes to Image Disks:
// "use specific, pre-created PVCs", the storage class "via the PVC's storageClassName")
// waits, unbound, for the VM's registration instead of getting an empty volume of its
// own; the registration takes it over: bound to a CNS volume backed by the image disk,
// under the policy of the claim's class, owned by the VM, with the data source and
// annotation of a registration's claim. The VM's disk stays the image's.
func TestPreCreatedClaimBecomesTheImageDisks(t *testing.T) {
	js := startService(t)
	policy := classPolicy(t, "my-encrypted-storage-class") // not the VM's class's
	putLateBindingClass(t, js, "late-encrypted", policy)
	c := newPVCFixture("my-os-pvc", "1Gi", "late-encrypted")
	c.put(t, js)
	data := newPVCFixture("my-new-data-pvc", "1Gi", "late-encrypted")
	data.put(t, js)
	image := multiDiskImage(t, js)
	v := imageDiskVM("pre-created", &image, atSCSI0("os-disk", 0, c.Ref.Name), atSCSI0("new-data", 5, data.Ref.Name))
	v.Put(t, js, false)
	_, st := c.wait(t, js, "waiting for the VM's registration", func(_ events.Slice, st model.PersistentVolumeClaimStatus) bool {
		return st.Phase == model.ClaimPending && len(st.Conditions) == 1 && strings.Contains(st.Conditions[0].Message, "registered")
	})
	t.Logf("before the VM exists: %s", st.Conditions[0].Message)
	// Where the image has no disk, the entry is a new volume: its claim is provisioned.
	data.waitBound(t, js)

	v.Deploy(t, vc, js, inventory.MultiDiskImage)
	v.WaitStatus(t, js, model.ServiceStorage, "the image disks registered", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		c, _ := deploytest.Condition(st, model.ConditionUnmanagedVolumesRegistered)
		return c == "True"
	})
	c.waitBound(t, js)
	_, pvc := c.stored(t, js)
	if n := len(cnsVolumes(t, claimVolumeName(c.UID))); n != 0 {
		t.Errorf("%d CNS volumes provisioned for the claim itself, want none: it is the image disk's", n)
	}
	found, err := testCNS(t).QueryVolume(t.Context(), &cnstypes.CnsQueryFilter{VolumeIds: []cnstypes.CnsVolumeId{{Id: pvc.Spec.VolumeName}}})
	if err != nil || len(found.Volumes) != 1 {
		t.Fatalf("CNS volume %q of the claim: %v (%v)", pvc.Spec.VolumeName, found, err)
	}
	if vol := found.Volumes[0]; !strings.HasPrefix(vol.Name, "disk-") || vol.StoragePolicyId != policy {
		t.Errorf("the claim's CNS volume %s has policy %s; want an image disk's registration (disk-<uuid>) under the claim's class's policy %s",
			vol.Name, vol.StoragePolicyId, policy)
	}
	ds := pvc.Spec.DataSourceRef
	owner := pvc.OwnerReferences
	if ds == nil || ds.Kind != "VirtualMachine" || ds.Name != v.Ref.Name || len(owner) != 1 || string(owner[0].UID) != v.UID ||
		pvc.Annotations[annotationDiskBacking] == "" || pvc.Labels[labelVMName] != v.Ref.Name || *pvc.Spec.StorageClassName != "late-encrypted" {
		t.Errorf("claim after registration: dataSourceRef %+v, owners %+v, annotations %v, labels %v, class %s; "+
			"want the VM's registration, in its own class", ds, owner, pvc.Annotations, pvc.Labels, *pvc.Spec.StorageClassName)
	}
	if req := model.ClaimRequest(&pvc); req.Cmp(*sizeQuantity(found.Volumes[0].BackingObjectDetails.GetCnsBackingObjectDetails().CapacityInMb << 20)) != 0 {
		t.Errorf("claim requests %s, want the image disk's size, %d MiB, not the 1Gi asked beforehand", req.String(),
			found.Volumes[0].BackingObjectDetails.GetCnsBackingObjectDetails().CapacityInMb)
	}
	v.Sync(t, js)
	if vol := volumeStatus(volumesVerified(t, js, v, "True"), "os-disk"); vol == nil || vol.Type != model.VolumeTypeClassic || !vol.Attached {
		t.Errorf("status of os-disk %+v, want the image disk, attached and Classic", vol)
	}
}

// While the VM's image is not ready (its item not found), its disks are not known: a claim
// at a full slot waits for the registration rather than taking a volume of its own, which
// the registration would then have to refuse.
func TestPreCreatedClaimWaitsWhileTheImageIsNotReady(t *testing.T) {
	js := startService(t)
	putLateBindingClass(t, js, "late-unknown", classPolicy(t, "my-storage-class"))
	missing := putImage(t, js, "vmi-not-ready", map[string]any{
		"apiVersion": "imageregistry.vmware.com/v1alpha1", "kind": "ContentLibraryItem", "name": "clitem-00000000000000000",
	})
	waitImage(t, js, missing, "Ready False", func(st model.VirtualMachineImageStatus) bool { return ready(st) == "False" })
	c := newPVCFixture("for-an-unknown-disk", "1Gi", "late-unknown")
	c.put(t, js)
	v := imageDiskVM("image-not-ready", &model.ImageRef{Kind: "VirtualMachineImage", Name: missing.Name}, atSCSI0("os-disk", 0, c.Ref.Name))
	v.Put(t, js, false)
	_, st := c.wait(t, js, "waiting for the VM's registration", func(_ events.Slice, st model.PersistentVolumeClaimStatus) bool {
		return len(st.Conditions) == 1 && strings.Contains(st.Conditions[0].Message, "not known yet")
	})
	if st.Phase != model.ClaimPending {
		t.Errorf("phase %s, want Pending", st.Phase)
	}
}

// A claim made beforehand that names the VM as a plain owner already is taken over all the
// same, the VM then its controller, once.
func TestPreCreatedClaimOwnedByTheVM(t *testing.T) {
	js := startService(t)
	putLateBindingClass(t, js, "late-owned", classPolicy(t, "my-storage-class"))
	image := multiDiskImage(t, js)
	c := newPVCFixture("owned-before", "1Gi", "late-owned")
	v := imageDiskVM("owns-its-claim", &image, atSCSI0("data-disk", 1, c.Ref.Name))
	v.Put(t, js, false)
	c.ownedBy(map[string]any{"apiVersion": "vmoperator.vmware.com/v1alpha5", "kind": "VirtualMachine", "name": v.Ref.Name, "uid": v.UID})
	c.put(t, js)
	v.Deploy(t, vc, js, inventory.MultiDiskImage)
	c.waitBound(t, js)
	_, pvc := c.stored(t, js)
	if owners := pvc.OwnerReferences; len(owners) != 1 || string(owners[0].UID) != v.UID || owners[0].Controller == nil || !*owners[0].Controller {
		t.Errorf("owners %+v, want the VM once, as controller", owners)
	}
	if ds := pvc.Spec.DataSourceRef; ds == nil || ds.Name != v.Ref.Name {
		t.Errorf("dataSourceRef %+v, want the VM", ds)
	}
}

// A claim made beforehand that cannot be the image disk's: one with a volume of its own
// already (its class binds at once), one asking for another access mode than the disk's.
// The registration says why and changes nothing of the claim.
func TestClaimThatCannotBeTheImageDisks(t *testing.T) {
	js := startService(t)
	putLateBindingClass(t, js, "late-binding-adopt", classPolicy(t, "my-storage-class"))
	image := multiDiskImage(t, js)
	tests := []struct {
		name, claim, want string
		setup             func(c *pvcFixture)
	}{
		{"bound", "bound-before", "bound to volume", func(c *pvcFixture) { c.put(t, js); c.waitBound(t, js) }},
		{"access-mode", "shared-for-a-plain-disk", "access modes", func(c *pvcFixture) {
			c.spec()["storageClassName"] = "late-binding-adopt"
			c.spec()["accessModes"] = []any{string(model.AccessModeReadWriteMany)}
			c.put(t, js)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newPVCFixture(tt.claim, "1Gi", "my-storage-class")
			tt.setup(c)
			_, was := c.stored(t, js)
			v := imageDiskVM("refused-"+tt.name, &image, atSCSI0("os-disk", 0, c.Ref.Name))
			v.Put(t, js, false)
			v.Deploy(t, vc, js, inventory.MultiDiskImage)
			_, st := v.WaitStatus(t, js, model.ServiceStorage, "the registration refused", func(_ events.Slice, st model.VirtualMachineStatus) bool {
				_, reason := deploytest.Condition(st, model.ConditionUnmanagedVolumesRegistered)
				return reason == reasonRegistrationFailed
			})
			for _, cond := range st.Conditions {
				if cond.Type == model.ConditionUnmanagedVolumesRegistered && !strings.Contains(cond.Message, tt.want) {
					t.Errorf("registration condition %q, want why the claim cannot be the disk's (%s)", cond.Message, tt.want)
				}
			}
			if _, pvc := c.stored(t, js); pvc.Spec.VolumeName != was.Spec.VolumeName || len(pvc.OwnerReferences) != 0 || pvc.Spec.DataSourceRef != nil {
				t.Errorf("claim after the refusal: volume %q (was %q), owners %+v, dataSourceRef %+v; want it untouched",
					pvc.Spec.VolumeName, was.Spec.VolumeName, pvc.OwnerReferences, pvc.Spec.DataSourceRef)
			}
		})
	}
}

// multiDiskImage stores my-namespace's image of the multi-disk item and returns it once
// the service has published its disks.
func multiDiskImage(t *testing.T, js jetstream.JetStream) model.ImageRef {
	t.Helper()
	image := seedImage(t, js, "VirtualMachineImage", inventory.MultiDiskImage)
	waitImage(t, js, events.Ref{Plural: pluralImages, Namespace: "my-namespace", Name: image.Name}, "its disks",
		func(st model.VirtualMachineImageStatus) bool { return len(st.Disks) > 0 })
	return image
}

// putLateBindingClass stores a StorageClass named name that binds WaitForFirstConsumer,
// with the storage policy policyID.
func putLateBindingClass(t *testing.T, js jetstream.JetStream, name, policyID string) {
	t.Helper()
	body, err := json.Marshal(map[string]any{
		"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
		"metadata":    map[string]any{"name": name, "uid": uuid.NewString()},
		"provisioner": "csi.vsphere.vmware.com", "parameters": map[string]any{model.StoragePolicyIDParameter: policyID},
		"volumeBindingMode": model.VolumeBindingWaitForFirstConsumer,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := events.AppendSpec(t.Context(), js, events.Ref{Plural: "storageclasses", Name: name}, events.OpPut, body, 0, nil); err != nil {
		t.Fatal(err)
	}
}
