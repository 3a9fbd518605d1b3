package storage

import (
	"fmt"
	"strings"

	cnstypes "github.com/vmware/govmomi/cns/types"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// imageDisk is a disk of the VM as its registration sees it: where it sits, its file and
// backing, and whether it is a linked clone (its backing has a parent).
type imageDisk struct {
	device    *types.VirtualDisk
	backing   vcenter.DiskBacking
	ctrlType  model.ControllerType
	bus, unit int32
	datastore types.ManagedObjectReference
	kind      cnstypes.CnsVolumeBackingType
	linked    bool
}

// name is the generated name of the disk's volume and claim, disk-<uuid> (seed, Image
// Disk Conversion), from the disk's own UUID so that a retry finds what it made before.
func (d imageDisk) name() string { return imageDiskName(d.backing.UUID) }

// imageDiskName is the name registration gives the volume and claim of the disk with
// the backing UUID diskUUID.
func imageDiskName(diskUUID string) string { return "disk-" + strings.ToLower(diskUUID) }

// matches says whether v is the spec.volumes entry placed on the disk's slot.
func (d imageDisk) matches(v model.VirtualMachineVolume) bool {
	s, ok := volumeSlot(v)
	return ok && s == slot{d.ctrlType, d.bus, d.unit}
}

// sharingMode is the disk's sharing in spec.volumes terms.
func (d imageDisk) sharingMode() model.VolumeSharingMode {
	if d.backing.Sharing == string(types.VirtualDiskSharingSharingMultiWriter) {
		return model.VolumeSharingModeMultiWriter
	}
	return model.VolumeSharingModeNone
}

// accessMode is the claim's: a multi-writer disk is ReadWriteMany (seed, Volume Modes and
// Access Modes).
func (d imageDisk) accessMode() model.PersistentVolumeAccessMode {
	if d.sharingMode() == model.VolumeSharingModeMultiWriter {
		return model.AccessModeReadWriteMany
	}
	return model.AccessModeReadWriteOnce
}

// volume is the spec.volumes entry the back-fill adds for the disk (seed, Unmanaged Disk
// Discovery): its generated name, its placement and modes; an image disk is not removable.
func (d imageDisk) volume() model.VirtualMachineVolume {
	return model.VirtualMachineVolume{
		Name:                d.name(),
		Removable:           ptr(false),
		ControllerType:      d.ctrlType,
		ControllerBusNumber: ptr(d.bus),
		UnitNumber:          ptr(d.unit),
		DiskMode:            diskModes[types.VirtualDiskMode(d.backing.DiskMode)],
		SharingMode:         d.sharingMode(),
	}
}

// imageDisks lists the VM's disks that sit on a controller slot and have a file and a
// UUID, and are no claim's first-class disk; a raw device mapping or a disk without a
// file is not registrable.
func imageDisks(devices object.VirtualDeviceList) []imageDisk {
	var out []imageDisk
	for _, dev := range devices.SelectByType((*types.VirtualDisk)(nil)) {
		disk := dev.(*types.VirtualDisk)
		d := imageDisk{device: disk, backing: vcenter.BackingOf(disk)}
		switch b := disk.Backing.(type) {
		case *types.VirtualDiskFlatVer2BackingInfo:
			d.kind, d.linked = cnstypes.CnsVolumeBackingTypeFlatVer2BackingInfo, b.Parent != nil
			d.datastore = refOf(b.Datastore)
		case *types.VirtualDiskSeSparseBackingInfo:
			d.kind, d.linked = cnstypes.CnsVolumeBackingTypeSeSparseBackingInfo, b.Parent != nil
			d.datastore = refOf(b.Datastore)
		case *types.VirtualDiskSparseVer2BackingInfo:
			d.kind, d.linked = cnstypes.CnsVolumeBackingTypeSparseVer2BackingInfo, b.Parent != nil
			d.datastore = refOf(b.Datastore)
		default:
			continue
		}
		c := devices.FindByKey(disk.ControllerKey)
		if c == nil || disk.UnitNumber == nil || d.backing.UUID == "" || d.backing.FileName == "" {
			continue
		}
		if disk.VDiskId != nil && disk.VDiskId.Id != "" {
			continue // a first-class disk attached as a claim's volume: managed already
		}
		typ, bus, ok := controllerID(c)
		if !ok {
			continue
		}
		d.ctrlType, d.bus, d.unit = typ, bus, *disk.UnitNumber
		out = append(out, d)
	}
	return out
}

func refOf(r *types.ManagedObjectReference) types.ManagedObjectReference {
	if r == nil {
		return types.ManagedObjectReference{}
	}
	return *r
}

// entryFor returns the index of the spec.volumes entry on d's slot, -1 for none.
func entryFor(vols []model.VirtualMachineVolume, d imageDisk) int {
	for i, v := range vols {
		if d.matches(v) {
			return i
		}
	}
	return -1
}

// claimName is the claim an image disk's entry is registered as: the one it names, else
// the entry's own name (a back-filled entry's is disk-<uuid>).
func claimName(v model.VirtualMachineVolume) string {
	if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName != "" {
		return v.PersistentVolumeClaim.ClaimName
	}
	return v.Name
}

// describeDisk names a disk in messages.
func describeDisk(d imageDisk) string {
	return fmt.Sprintf("%s %d:%d (%s)", d.ctrlType, d.bus, d.unit, d.backing.FileName)
}
