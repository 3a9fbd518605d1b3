package storage

import (
	"strings"
	"sync/atomic"
	"testing"

	cnstypes "github.com/vmware/govmomi/cns/types"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
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

// A removal of an image disk's entry that vCenter refuses is tried again by a later pass:
// the disk is remembered as leaving (volumeRecord) although no entry reports it any more.
// Meanwhile VolumesVerified says the removal failed, and status.storage does not charge
// the disk, which its claim still does.
func TestRefusedImageDiskRemovalIsRetried(t *testing.T) {
	js := startService(t)
	v, vcVM, _ := registeredMultiDiskVM(t, js, "image-disk-refused")
	v.Sync(t, js)
	var refused atomic.Int32
	vc.Sim.Intercept(func(_ *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault) {
		if req, ok := m.Body.(*types.ReconfigVM_Task); ok && m.This == vcVM.Reference() && removesDevice(req.Spec) && refused.Add(1) == 1 {
			return nil, &types.InvalidState{}
		}
		return nil, nil
	})
	t.Cleanup(func() { vc.Sim.Intercept(nil) })
	v.Spec.Volumes = v.Spec.Volumes[:1]
	v.Put(t, js, false)
	st := volumesVerified(t, js, v, "False")
	for _, c := range st.Conditions {
		if c.Type == model.ConditionHardwareVolumesVerified && !strings.Contains(c.Message, "no longer in spec.volumes failed") {
			t.Errorf("VolumesVerified %q, want the failed removal", c.Message)
		}
	}
	if st.Storage == nil || st.Storage.Requested == nil || !st.Storage.Requested.Disks.IsZero() {
		t.Errorf("status.storage %+v while the removed disk is attached, want no disks requested: its claim charges it", st.Storage)
	}
	disks := func() int {
		return len(object.VirtualDeviceList(readTestVM(t, vcVM).Config.Hardware.Device).SelectByType((*types.VirtualDisk)(nil)))
	}
	if refused.Load() != 1 || disks() != 2 {
		t.Fatalf("%d removals refused, %d disks on the VM; want the first removal refused and both disks there", refused.Load(), disks())
	}

	v.Annotations["example.com/touched"] = "yes" // any change brings the VM back
	v.Put(t, js, false)
	waitFor(t, "the refused removal done by a later pass", func() bool { return disks() == 1 })
	volumesVerified(t, js, v, "True")
}
