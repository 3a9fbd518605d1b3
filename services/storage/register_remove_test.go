package storage

import (
	"testing"

	cnstypes "github.com/vmware/govmomi/cns/types"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// The seed's Removing Additional Image Disks: an image disk's entry, made removable and
// removed from spec.volumes, detaches the disk from the VM; its claim stays, and so does
// its file, which the claim's CNS volume is backed by. The claim, still the VM's, goes
// with the VM, with its CnsRegisterVolume.
func TestRemovedImageDiskIsDetached(t *testing.T) {
	js := startService(t)
	v, vcVM, _ := registeredMultiDiskVM(t, js, "image-disk-removed")
	v.Sync(t, js)
	if len(v.Spec.Volumes) != 2 {
		t.Fatalf("spec.volumes %+v, want the 2 image disks", v.Spec.Volumes)
	}
	second := v.Spec.Volumes[1]
	v.Spec.Volumes = v.Spec.Volumes[:1]
	v.Put(t, js, false)
	st := volumesVerified(t, js, v, "True")

	disks := object.VirtualDeviceList(readTestVM(t, vcVM).Config.Hardware.Device).SelectByType((*types.VirtualDisk)(nil))
	if len(disks) != 1 {
		t.Fatalf("%d disks on the VM after %s was removed, want the first image disk alone", len(disks), second.Name)
	}
	if vol := volumeStatus(st, second.Name); vol != nil {
		t.Errorf("status still reports the removed volume: %+v", vol)
	}
	claim := readObject[model.PersistentVolumeClaim](t, js, pluralClaims, second.PersistentVolumeClaim.ClaimName)
	if claim.Spec.VolumeName == "" {
		t.Errorf("claim %s lost its volume: %+v", claim.Name, claim.Spec)
	}
	found, err := testCNS(t).QueryVolume(t.Context(), &cnstypes.CnsQueryFilter{VolumeIds: []cnstypes.CnsVolumeId{{Id: claim.Spec.VolumeName}}})
	if err != nil || len(found.Volumes) != 1 {
		t.Errorf("CNS volume %s of the removed disk: %v (%v), want it kept", claim.Spec.VolumeName, found, err)
	}

	v.Sync(t, js)
	v.Put(t, js, true)
	v.WaitStatus(t, js, model.ServiceStorage, "released", func(s events.Slice, _ model.VirtualMachineStatus) bool { return s.Released })
	for _, plural := range []string{pluralClaims, pluralRegistered} {
		if !deletionAsked(t, js, events.Ref{Plural: plural, Namespace: "my-namespace", Name: second.PersistentVolumeClaim.ClaimName}) {
			t.Errorf("%s %s of the removed entry not deleted with its VM", plural, second.Name)
		}
	}
}
