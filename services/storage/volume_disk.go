package storage

import (
	"cmp"
	"fmt"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// The disks of a VM that are CNS volumes, and the device changes that attach, grow and
// detach them.

// volumeDisk finds the VM's disk backed by the CNS volume: the disk vmop attached names
// the volume in vDiskId, an image disk registered in place is found by its file
// (CONTRACTS B: a volume counts as attached when one of the VM's disks is backed by its
// file).
func volumeDisk(devices object.VirtualDeviceList, v cnsVolume) *types.VirtualDisk {
	for _, d := range devices.SelectByType((*types.VirtualDisk)(nil)) {
		disk := d.(*types.VirtualDisk)
		if (disk.VDiskId != nil && disk.VDiskId.Id == v.id) || (v.diskPath != "" && vcenter.BackingOf(disk).FileName == v.diskPath) {
			return disk
		}
	}
	return nil
}

// cnsDisks are the VM's disks that vmop attached as CNS volumes, by volume ID.
func cnsDisks(devices object.VirtualDeviceList) map[string]*types.VirtualDisk {
	out := map[string]*types.VirtualDisk{}
	for _, d := range devices.SelectByType((*types.VirtualDisk)(nil)) {
		if disk := d.(*types.VirtualDisk); disk.VDiskId != nil && disk.VDiskId.Id != "" {
			out[disk.VDiskId.Id] = disk
		}
	}
	return out
}

// addDisk attaches the volume's file at the controller and unit, with the volume's disk
// and sharing modes; no file operation, so the file is used as it is.
func addDisk(v cnsVolume, spec model.VirtualMachineVolume, key, ctrlKey, unit int32) types.BaseVirtualDeviceConfigSpec {
	backing := &types.VirtualDiskFlatVer2BackingInfo{
		VirtualDeviceFileBackingInfo: types.VirtualDeviceFileBackingInfo{FileName: v.diskPath},
		DiskMode:                     string(vsphereDiskMode(spec)),
		Sharing:                      string(types.VirtualDiskSharingSharingNone),
		ThinProvisioned:              types.NewBool(true),
	}
	if volumeSharing(spec) == model.VolumeSharingModeMultiWriter {
		backing.Sharing = string(types.VirtualDiskSharingSharingMultiWriter)
	}
	disk := &types.VirtualDisk{
		VirtualDevice:   types.VirtualDevice{Key: key, ControllerKey: ctrlKey, UnitNumber: &unit, Backing: backing},
		CapacityInBytes: v.capacity,
		CapacityInKB:    v.capacity / 1024,
		VDiskId:         &types.ID{Id: v.id},
	}
	return &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationAdd, Device: disk}
}

// growDisk edits the disk to the capacity; both capacity fields are set, since vcsim
// reads a missing CapacityInBytes as 0.
func growDisk(disk *types.VirtualDisk, capacity int64) types.BaseVirtualDeviceConfigSpec {
	grown := *disk
	grown.CapacityInBytes, grown.CapacityInKB = capacity, capacity/1024
	return &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationEdit, Device: &grown}
}

// removeDisk detaches the disk and keeps its file (no file operation).
func removeDisk(disk *types.VirtualDisk) types.BaseVirtualDeviceConfigSpec {
	return &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationRemove, Device: disk}
}

// volumeSharing is the volume's sharing mode with the application presets of D12 applied,
// for a VM stored before defaulting filled it.
func volumeSharing(v model.VirtualMachineVolume) model.VolumeSharingMode {
	switch {
	case v.SharingMode != "":
		return v.SharingMode
	case v.ApplicationType == model.VolumeApplicationTypeOracleRAC:
		return model.VolumeSharingModeMultiWriter
	}
	return model.VolumeSharingModeNone
}

// vsphereDiskMode is the volume's disk mode in vSphere's words, with the presets of D12.
func vsphereDiskMode(v model.VirtualMachineVolume) types.VirtualDiskMode {
	mode := v.DiskMode
	if mode == "" {
		mode = model.VolumeDiskModePersistent
		if v.ApplicationType != "" {
			mode = model.VolumeDiskModeIndependentPersistent
		}
	}
	for vs, m := range diskModes {
		if m == mode {
			return vs
		}
	}
	return types.VirtualDiskModePersistent
}

// volumeSlot is the controller slot a volume entry is placed at (SCSI when it names no
// controller type); false when it gives no bus or unit.
func volumeSlot(v model.VirtualMachineVolume) (slot, bool) {
	typ := cmp.Or(v.ControllerType, model.ControllerTypeSCSI)
	if v.ControllerBusNumber == nil || v.UnitNumber == nil {
		return slot{typ: typ}, false
	}
	return slot{typ, *v.ControllerBusNumber, *v.UnitNumber}, true
}

// imageDiskSlot names the controller slot a volume entry without a claim is placed at,
// and says whether the VM has a disk there (an image disk the entry maps).
func imageDiskSlot(devices object.VirtualDeviceList, v model.VirtualMachineVolume) (string, bool) {
	want, ok := volumeSlot(v)
	if !ok {
		return fmt.Sprintf("%s (no bus and unit given)", want.typ), false
	}
	for _, d := range devices.SelectByType((*types.VirtualDisk)(nil)) {
		if s, ok := deviceSlot(devices, d); ok && s == want {
			return want.String(), true
		}
	}
	return want.String(), false
}
