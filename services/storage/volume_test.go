package storage

import (
	"testing"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// vmSpec is a VM of the seed's class and storage class with a ParaVirtual SCSI bus 0 and
// the volumes.
func vmSpec(vols ...model.VirtualMachineVolume) model.VirtualMachineSpec {
	return model.VirtualMachineSpec{
		ClassName: inventory.SeedClassName, StorageClass: "my-storage-class",
		Hardware: hardware(model.SCSIControllerSpec{BusNumber: 0, Type: model.SCSIControllerTypeParaVirtual}),
		Volumes:  vols,
	}
}

// The seed's Adding Managed Volumes: my-pvc (8Gi, Block, ReadWriteOnce) added to my-vm is
// attached as an 8 GiB disk backed by its CNS volume's file at the next free SCSI unit,
// reported attached with the disk's UUID; removing the entry detaches it and keeps the
// file; adding it back attaches the same file again.
func TestAttachDetachReattach(t *testing.T) {
	js := startService(t)
	pvc := boundClaim(t, js, "my-pvc", "8Gi", model.AccessModeReadWriteOnce)
	v := deploytest.NewVM("my-namespace", "my-vm", vmSpec(claimVolume("my-disk-1", "my-pvc")))
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	st := volumesVerified(t, js, v, "True")

	disks := disksOf(t, vm)[pvc.volumeID]
	if len(disks) != 1 {
		t.Fatalf("%d disks of volume %s in vcsim, want 1", len(disks), pvc.volumeID)
	}
	disk := disks[0]
	if disk.CapacityInBytes != 8<<30 {
		t.Errorf("disk capacity %d, want 8 GiB", disk.CapacityInBytes)
	}
	if *disk.UnitNumber != 1 {
		t.Errorf("disk on unit %d, want 1: the next free unit after the image disk", *disk.UnitNumber)
	}
	backing := disk.Backing.(*types.VirtualDiskFlatVer2BackingInfo)
	got := volumeStatus(st, "my-disk-1")
	if got == nil {
		t.Fatalf("no status.volumes entry my-disk-1 in %+v", st.Volumes)
	}
	if !got.Attached || got.Type != model.VolumeTypeManaged || got.DiskUUID == "" || got.DiskUUID != backing.Uuid ||
		got.ControllerType != model.ControllerTypeSCSI || *got.ControllerBusNumber != 0 || *got.UnitNumber != 1 ||
		got.Limit.Value() != 8<<30 || got.Requested.Value() != 8<<30 || got.DiskMode != model.VolumeDiskModePersistent || got.Error != "" {
		t.Errorf("status of my-disk-1 = %+v, want Managed, attached, disk UUID %s on SCSI 0:1, 8Gi, Persistent", got, backing.Uuid)
	}
	for _, vol := range st.Volumes {
		if vol.Type == model.VolumeTypeClassic && vol.DiskUUID == backing.Uuid {
			t.Errorf("the volume's disk is also reported Classic: %+v", vol)
		}
	}

	// Detach: the entry removed, the disk goes and its file stays.
	v.Spec.Volumes = nil
	v.Put(t, js, false)
	st = volumesVerified(t, js, v, "True")
	if n := len(disksOf(t, vm)[pvc.volumeID]); n != 0 {
		t.Fatalf("%d disks of the volume after its entry was removed, want 0", n)
	}
	if vol := volumeStatus(st, "my-disk-1"); vol != nil {
		t.Errorf("status still reports the removed volume: %+v", vol)
	}
	if len(st.Volumes) != 1 {
		t.Errorf("status.volumes %+v, want the image disk alone", st.Volumes)
	}

	// Reattach: the same file again, with its UUID.
	v.Spec.Volumes = []model.VirtualMachineVolume{claimVolume("my-disk-1", "my-pvc")}
	v.Put(t, js, false)
	volumesVerified(t, js, v, "True")
	again := disksOf(t, vm)[pvc.volumeID]
	if len(again) != 1 {
		t.Fatalf("%d disks of the volume after re-adding it, want 1", len(again))
	}
	if b := again[0].Backing.(*types.VirtualDiskFlatVer2BackingInfo); b.FileName != backing.FileName || b.Uuid != backing.Uuid {
		t.Errorf("reattached file %s (UUID %s), want the same %s (%s)", b.FileName, b.Uuid, backing.FileName, backing.Uuid)
	}
}
