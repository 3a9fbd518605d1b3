package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// Where the registered claims and CnsRegisterVolumes say what they are.
const (
	// labelVMName is the label of the claims made for a VM's image disks (seed, Viewing
	// Registered PVCs), also on their CnsRegisterVolumes.
	labelVMName = "vm.vmoperator.vmware.com/name"
	// labelCreatedBy is the CnsRegisterVolume's label naming its VM (seed, CnsRegisterVolume
	// Custom Resource).
	labelCreatedBy = "vmoperator.vmware.com/created-by"
	// annotationDiskBacking is the backing type of the registered disk (seed, PVC
	// Annotations), which CNS needs when it attaches the volume.
	annotationDiskBacking = "cns.vmware.com.protected/disk-backing"

	pluralRegistered = "cnsregistervolumes"
)

// owned is an object the VM owns: its metadata says so, and it is deleted with the VM.
type owned struct {
	ref    events.Ref
	seq    uint64 // its last SPECS record, 0 for none
	live   bool   // the last record is not a tombstone
	body   []byte
	header struct {
		Metadata struct {
			UID               string                  `json:"uid"`
			DeletionTimestamp string                  `json:"deletionTimestamp"`
			OwnerReferences   []metav1.OwnerReference `json:"ownerReferences"`
		} `json:"metadata"`
	}
}

// read reads the object's last SPECS record.
func readOwned(ctx context.Context, js jetstream.JetStream, ref events.Ref) (owned, error) {
	o := owned{ref: ref}
	rec, err := events.LastSpec(ctx, js, ref)
	if errors.Is(err, events.ErrNotFound) {
		return o, nil
	}
	if err != nil {
		return o, err
	}
	return ownedFrom(rec)
}

// ownedFrom reads an object from its last SPECS record.
func ownedFrom(rec events.SpecRecord) (owned, error) {
	o := owned{ref: rec.Ref, seq: rec.Seq, live: rec.Op != events.OpDelete, body: rec.Body}
	if !o.live {
		return o, nil
	}
	if err := json.Unmarshal(rec.Body, &o.header); err != nil {
		return o, fmt.Errorf("%w: decode %s: %v", events.ErrPermanent, rec.Ref, err)
	}
	return o, nil
}

// ownedBy says whether the object names the VM of uid among its owners.
func (o owned) ownedBy(uid string) bool {
	for _, r := range o.header.Metadata.OwnerReferences {
		if string(r.UID) == uid {
			return true
		}
	}
	return false
}

// ownerOf is the owner reference of objects the VM owns, as the seed writes it.
func ownerOf(vm *model.VirtualMachine) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{
		APIVersion: model.GroupVMOperator + "/" + model.VersionVMOperator, Kind: "VirtualMachine",
		Name: vm.Name, UID: vm.UID, Controller: &yes, BlockOwnerDeletion: &yes,
	}
}

// newMeta is the complete metadata of an object the service creates for vm, as the
// gateway gives an object it creates.
func newMeta(vm *model.VirtualMachine, name string, labels, annotations map[string]string, now time.Time) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: name, Namespace: vm.Namespace, UID: k8stypes.UID(uuid.NewString()),
		CreationTimestamp: metav1.NewTime(now.UTC().Truncate(time.Second)), Generation: 1,
		Labels: labels, Annotations: annotations, OwnerReferences: []metav1.OwnerReference{ownerOf(vm)},
	}
}

// registration is one image disk being registered: its claim and CnsRegisterVolume.
type registration struct {
	vm       *model.VirtualMachine
	disk     imageDisk
	claim    string // the claim's name, also the CnsRegisterVolume's
	class    string // the claim's storage class
	location diskLocation
}

// registerVolume is the CnsRegisterVolume of the registration.
func (g registration) registerVolume(now time.Time) model.CnsRegisterVolume {
	return model.CnsRegisterVolume{
		TypeMeta: metav1.TypeMeta{APIVersion: model.GroupCNS + "/" + model.VersionCNS, Kind: "CnsRegisterVolume"},
		ObjectMeta: newMeta(g.vm, g.claim,
			map[string]string{labelVMName: g.vm.Name, labelCreatedBy: g.vm.Name}, nil, now),
		Spec: model.CnsRegisterVolumeSpec{
			PvcName: g.claim, AccessMode: g.disk.accessMode(), DiskURLPath: g.location.urlPath,
			VolumeMode: registeredVolumeMode,
		},
	}
}

// registeredVolumeMode is the volume mode of image disks' claims: the seed's Volume Modes
// and Access Modes give Block where shared disks are supported, as our baseline's
// VMSharedDisks feature says they are (a multi-writer disk's ReadWriteMany claim must be
// Block, or no update of it would be admitted).
const registeredVolumeMode = model.VolumeModeBlock

// persistentVolumeClaim is the claim of the registration, bound to the CNS volume: a
// claim that arrives bound is never provisioned (it registers what exists).
func (g registration) persistentVolumeClaim(volumeID string, now time.Time) model.PersistentVolumeClaim {
	class := g.class
	return model.PersistentVolumeClaim{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: newMeta(g.vm, g.claim, map[string]string{labelVMName: g.vm.Name},
			map[string]string{annotationDiskBacking: string(g.disk.kind)}, now),
		Spec: model.PersistentVolumeClaimSpec{
			AccessModes: []model.PersistentVolumeAccessMode{g.disk.accessMode()},
			Resources: &model.VolumeResourceRequirements{
				Requests: model.ResourceList{"storage": *sizeQuantity(g.disk.device.CapacityInBytes)},
			},
			StorageClassName: &class,
			VolumeName:       volumeID,
			VolumeMode:       registeredVolumeMode,
			DataSourceRef:    g.dataSource(),
		},
	}
}

// registrationOf is the VM a claim is the image-disk registration of, as a registration
// writes its claim: the VM its controller and data source, the disk's backing annotated.
func registrationOf(c *model.PersistentVolumeClaim) (metav1.OwnerReference, bool) {
	ds := c.Spec.DataSourceRef
	if c.Annotations[annotationDiskBacking] == "" || ds == nil || ds.Kind != "VirtualMachine" {
		return metav1.OwnerReference{}, false
	}
	for _, ow := range c.OwnerReferences {
		if kind, ok := kindOf(ow); ok && kind.Plural == "virtualmachines" && ow.Controller != nil && *ow.Controller && ow.Name == ds.Name {
			return ow, true
		}
	}
	return metav1.OwnerReference{}, false
}

// dataSource is the data source of the registration's claim: the VM, whose disk it is.
func (g registration) dataSource() *model.TypedObjectReference {
	group := model.GroupVMOperator
	return &model.TypedObjectReference{APIGroup: &group, Kind: "VirtualMachine", Name: g.vm.Name}
}

// create appends obj as the object's first live record, compare-and-swap on what read
// found (nothing, or a tombstone): a concurrent creation makes it fail with a conflict.
func create(ctx context.Context, js jetstream.JetStream, o owned, obj any) error {
	body, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("%w: encode %s: %v", events.ErrPermanent, o.ref, err)
	}
	if _, err := events.AppendSpec(ctx, js, o.ref, events.OpPut, body, o.seq, nil); err != nil {
		return fmt.Errorf("create %s: %w", o.ref, err)
	}
	return nil
}

// reportStatus publishes the service's status slice of an object it created.
func reportStatus(ctx context.Context, js jetstream.JetStream, ref events.Ref, uid string, status any) error {
	body, err := json.Marshal(status)
	if err != nil {
		return fmt.Errorf("%w: encode status of %s: %v", events.ErrPermanent, ref, err)
	}
	slice := events.Slice{Service: model.ServiceStorage, UID: uid, Generation: 1, Status: body}
	if _, err := events.PublishStatus(ctx, js, ref, slice); err != nil {
		return fmt.Errorf("report %s: %w", ref, err)
	}
	return nil
}
