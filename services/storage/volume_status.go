package storage

import (
	"fmt"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// report is the entries of status.volumes for spec.volumes, in spec order: each volume's
// disk as the VM has it, or why it is not attached. reconfigureErr is vCenter's refusal
// of the reconfigure, if any; held are the disks kept for entries whose claim cannot be
// read (disk UUID → entry name), still reported attached, unless the volume another entry
// names now is that disk.
func report(want []wantVolume, devices object.VirtualDeviceList, layout *types.VirtualMachineFileLayoutEx, held map[string]string, reconfigureErr error) volumeReport {
	rep := volumeReport{managed: map[int32]bool{}}
	volDisk := make([]*types.VirtualDisk, len(want)) // each entry's volume's disk, when it has one
	resolved := map[int32]bool{}
	for i, w := range want {
		if w.cns.id != "" {
			if volDisk[i] = volumeDisk(devices, w.cns); volDisk[i] != nil {
				resolved[volDisk[i].Key] = true
			}
		}
	}
	heldDisk := map[string]*types.VirtualDisk{} // by entry name; a disk another entry names is that one's
	for _, d := range devices.SelectByType((*types.VirtualDisk)(nil)) {
		disk := d.(*types.VirtualDisk)
		if name, ok := held[vcenter.BackingOf(disk).UUID]; ok && !resolved[disk.Key] {
			rep.managed[disk.Key] = true
			heldDisk[name] = disk
		}
	}
	for i, w := range want {
		v := model.VirtualMachineVolumeStatus{Name: w.spec.Name, Type: model.VolumeTypeManaged}
		disk := volDisk[i]
		if w.cns.id == "" && w.problem != "" {
			disk = heldDisk[w.spec.Name]
		}
		switch {
		case disk != nil:
			rep.managed[disk.Key] = true
			v = diskStatus(devices, disk, layout)
			v.Name, v.Type = w.spec.Name, w.volumeType(v.DiskUUID)
			if w.claim.requested > 0 {
				v.Requested = sizeQuantity(w.claim.requested)
			}
			switch {
			case w.problem != "":
				v.Error = w.problem
			case reconfigureErr != nil && disk.CapacityInBytes < w.cns.capacity:
				v.Error = fmt.Sprintf("growing the disk to %s failed: %v", sizeQuantity(w.cns.capacity), reconfigureErr)
			}
		case w.problem != "":
			v.Error = w.problem
		case reconfigureErr != nil:
			v.Error = fmt.Sprintf("attaching the disk failed: %v", reconfigureErr)
		default:
			// Placed and reconfigured without a fault, yet the VM read back has no disk
			// of the volume: say so; the next reconcile attaches it again.
			v.Error = fmt.Sprintf("vCenter completed the reconfigure, but the VM has no disk of CNS volume %s", w.cns.id)
		}
		if v.Error != "" {
			rep.problems = append(rep.problems, fmt.Sprintf("volume %s: %s", w.spec.Name, v.Error))
		}
		rep.volumes = append(rep.volumes, v)
	}
	return rep
}

// volumeType is the type of the entry's status.volumes entry on the disk diskUUID:
// Classic for an image disk registered as a claim, whatever the entry is named (the
// registration's disk-<uuid>, or the user's own, seed: Mapping spec.volumes to Image
// Disks), since the type tells where the disk came from, not what backs it now (seed,
// Volume Type in Status); else Managed. A registered claim says so (claim.fromImage); while
// the claim cannot be read, the last report (w.classic) and the registration's name do.
func (w wantVolume) volumeType(diskUUID string) model.VolumeType {
	if w.claim.fromImage || w.classic || diskUUID != "" && w.spec.Name == imageDiskName(diskUUID) {
		return model.VolumeTypeClassic
	}
	return model.VolumeTypeManaged
}
