package storage

import (
	"strconv"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// Image disks mapped by the user's own spec.volumes entries (seed, Mapping spec.volumes to
// Image Disks) are Classic once registered, like the registration's disk-<uuid> entries
// (seed, Volume Type in Status: the type tells where the disk came from), each reported
// once under its entry's name and charged to its claim, not to status.storage. Removing
// one of those entries detaches its disk, as for any image disk's entry.
func TestPreMappedImageDisksAreClassic(t *testing.T) {
	js := startService(t)
	v := imageDiskVM("pre-mapped-classic", nil, atSCSI0("boot-disk", 0, "my-custom-boot-pvc"), atSCSI0("data-disk", 1, ""))
	vcVM, st := deployRegistered(t, js, v)

	if len(st.Volumes) != 2 {
		t.Errorf("status.volumes %+v, want one entry per image disk", st.Volumes)
	}
	for _, name := range []string{"boot-disk", "data-disk"} {
		vol := volumeStatus(st, name)
		if vol == nil || vol.Type != model.VolumeTypeClassic || !vol.Attached {
			t.Errorf("status.volumes entry %s: %+v, want an attached Classic entry", name, vol)
		}
	}
	if st.Storage == nil || st.Storage.Requested == nil || !st.Storage.Requested.Disks.IsZero() {
		t.Errorf("status.storage %+v, want no disks requested: the registered disks are their claims'", st.Storage)
	}

	v.Spec.Volumes = v.Spec.Volumes[:1]
	v.Put(t, js, false)
	st = volumesVerified(t, js, v, "True")
	if disks := object.VirtualDeviceList(readTestVM(t, vcVM).Config.Hardware.Device).SelectByType((*types.VirtualDisk)(nil)); len(disks) != 1 {
		t.Errorf("%d disks on the VM after data-disk was removed, want boot-disk's alone", len(disks))
	}
	if len(st.Volumes) != 1 || volumeStatus(st, "boot-disk") == nil {
		t.Errorf("status.volumes %+v after data-disk was removed, want boot-disk's entry alone", st.Volumes)
	}
}

// imageDiskVM is a VM in my-namespace of the seed's class and storage class, with the
// multi-disk image's ParaVirtual controller, image (nil for none) and volumes.
func imageDiskVM(name string, image *model.ImageRef, volumes ...model.VirtualMachineVolume) *deploytest.VM {
	return deploytest.NewVM("my-namespace", name, model.VirtualMachineSpec{
		ClassName: inventory.SeedClassName, StorageClass: "my-storage-class", Image: image,
		Hardware: hardware(model.SCSIControllerSpec{BusNumber: 0, Type: model.SCSIControllerTypeParaVirtual}),
		Volumes:  volumes,
	})
}

// atSCSI0 is a volume entry at unit of SCSI controller 0, naming claim unless it is "".
func atSCSI0(name string, unit int32, claim string) model.VirtualMachineVolume {
	v := model.VirtualMachineVolume{Name: name, ControllerType: model.ControllerTypeSCSI, ControllerBusNumber: ptr[int32](0), UnitNumber: ptr(unit)}
	if claim != "" {
		v.PersistentVolumeClaim = &model.PersistentVolumeClaimVolumeSource{ClaimName: claim}
	}
	return v
}

// A user-named image-disk entry whose claim cannot be read any more (deleted from the
// store behind pvc-protection's back) keeps its disk, and its type: the disk still came
// from the image, so it stays Classic, not Managed.
func TestPreMappedImageDiskKeepsItsTypeWithoutItsClaim(t *testing.T) {
	js := startService(t)
	v := imageDiskVM("pre-mapped-unread", nil, atSCSI0("boot-disk", 0, "my-unread-boot-pvc"))
	deployRegistered(t, js, v)

	claim := events.Ref{Plural: "persistentvolumeclaims", Namespace: v.Ref.Namespace, Name: "my-unread-boot-pvc"}
	rec, err := events.LastSpec(t.Context(), js, claim)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := events.AppendSpec(t.Context(), js, claim, events.OpDelete, nil, rec.Seq, nil); err != nil {
		t.Fatal(err)
	}
	// Two reconciles (an annotation storage reads changes each time): the second reads the
	// record the first wrote while the claim was gone.
	for pass := 1; pass <= 2; pass++ {
		v.Annotations["example.com/pass"] = strconv.Itoa(pass)
		v.Put(t, js, false)
		vol := volumeStatus(volumesVerified(t, js, v, "False"), "boot-disk")
		if vol == nil || !vol.Attached || vol.Type != model.VolumeTypeClassic || vol.Error == "" {
			t.Errorf("pass %d: status of boot-disk without its claim: %+v, want attached, Classic, with the claim's error", pass, vol)
		}
	}
}

// deployRegistered stores v, deploys it from the multi-disk image and waits until its
// image disks are registered and its volumes verified; it returns the VM and that status.
func deployRegistered(t *testing.T, js jetstream.JetStream, v *deploytest.VM) (*object.VirtualMachine, model.VirtualMachineStatus) {
	t.Helper()
	v.Put(t, js, false)
	vcVM := v.Deploy(t, vc, js, inventory.MultiDiskImage)
	v.WaitStatus(t, js, model.ServiceStorage, "the image disks registered", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		c, _ := deploytest.Condition(st, model.ConditionUnmanagedVolumesRegistered)
		return c == "True"
	})
	v.Sync(t, js)
	return vcVM, volumesVerified(t, js, v, "True")
}
