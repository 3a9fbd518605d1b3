package storage

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// observation is the service's part of the status, read from the VM (api-rules §3).
type observation struct {
	volumes     []model.VirtualMachineVolumeStatus
	controllers []model.VirtualControllerStatus
	storage     *model.VirtualMachineStorageStatus
}

// observe reports the VM's disks other than the managed ones (device keys) as Classic
// volumes after the managed volumes, and the storage accounting of the Classic ones but
// those a claim charges already (claimed, disk UUIDs).
func observe(vm mo.VirtualMachine, managed []model.VirtualMachineVolumeStatus, managedDisks map[int32]bool, claimed map[string]bool) observation {
	devices := object.VirtualDeviceList(vm.Config.Hardware.Device)
	classic := classicVolumes(devices, vm.LayoutEx, managedDisks)
	return observation{
		volumes:     append(slices.Clone(managed), classic...),
		controllers: controllers(devices),
		storage: usage(slices.DeleteFunc(slices.Clone(classic), func(v model.VirtualMachineVolumeStatus) bool {
			return claimed[v.DiskUUID]
		}), vm.LayoutEx),
	}
}

// classicVolumes reports every disk of the VM that is not a managed volume as a Classic
// volume, sorted by disk UUID.
func classicVolumes(devices object.VirtualDeviceList, layout *types.VirtualMachineFileLayoutEx, managed map[int32]bool) []model.VirtualMachineVolumeStatus {
	var out []model.VirtualMachineVolumeStatus
	for _, d := range devices.SelectByType((*types.VirtualDisk)(nil)) {
		disk := d.(*types.VirtualDisk)
		if managed[disk.Key] {
			continue
		}
		v := diskStatus(devices, disk, layout)
		v.Name, v.Type = volumeName(vcenter.BackingOf(disk).FileName, disk.Key), model.VolumeTypeClassic
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b model.VirtualMachineVolumeStatus) int { return cmp.Compare(a.DiskUUID, b.DiskUUID) })
	uniqueNames(out)
	return out
}

// diskStatus is what the VM shows of a disk: attached, its UUID, place, modes, sizes and
// key.
func diskStatus(devices object.VirtualDeviceList, disk *types.VirtualDisk, layout *types.VirtualMachineFileLayoutEx) model.VirtualMachineVolumeStatus {
	b := vcenter.BackingOf(disk)
	v := model.VirtualMachineVolumeStatus{
		Attached:    true,
		DiskUUID:    b.UUID,
		DiskMode:    diskModes[types.VirtualDiskMode(b.DiskMode)],
		SharingMode: model.VolumeSharingModeNone,
		Limit:       sizeQuantity(disk.CapacityInBytes),
		Requested:   sizeQuantity(disk.CapacityInBytes),
		Used:        sizeQuantity(uniqueSize(layout, disk.Key)),
	}
	if b.Sharing == string(types.VirtualDiskSharingSharingMultiWriter) {
		v.SharingMode = model.VolumeSharingModeMultiWriter
	}
	if b.KeyID != nil {
		v.Crypto = &model.VirtualMachineVolumeCryptoStatus{KeyID: b.KeyID.KeyId}
		if b.KeyID.ProviderId != nil {
			v.Crypto.ProviderID = b.KeyID.ProviderId.Id
		}
	}
	if c := devices.FindByKey(disk.ControllerKey); c != nil && disk.UnitNumber != nil {
		if typ, bus, ok := controllerID(c); ok {
			v.ControllerType, v.ControllerBusNumber, v.UnitNumber = typ, &bus, ptr(*disk.UnitNumber)
		}
	}
	return v
}

var diskModes = map[types.VirtualDiskMode]model.VolumeDiskMode{
	types.VirtualDiskModePersistent:                model.VolumeDiskModePersistent,
	types.VirtualDiskModeIndependent_persistent:    model.VolumeDiskModeIndependentPersistent,
	types.VirtualDiskModeNonpersistent:             model.VolumeDiskModeNonPersistent,
	types.VirtualDiskModeIndependent_nonpersistent: model.VolumeDiskModeIndependentNonPersistent,
}

// volumeName names a disk as upstream does, after its file ("[ds] my-vm/disk-0.vmdk" is
// disk-0), made a DNS label so it can stand beside spec.volumes names (my-vm_1 becomes
// my-vm-1). A disk without a usable file name is disk-<device key>.
func volumeName(fileName string, key int32) string {
	var p object.DatastorePath
	base := fileName
	if p.FromString(fileName) {
		base = p.Path
	}
	base = path.Base(base)
	base = strings.TrimSuffix(base, path.Ext(base))
	var b strings.Builder
	for _, r := range strings.ToLower(base) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if len(name) > 63 {
		name = strings.Trim(name[:63], "-")
	}
	if name == "" {
		return fmt.Sprintf("disk-%d", key)
	}
	return name
}

// uniqueNames suffixes repeated names (two disks with the same file name in different
// directories) with -2, -3, … in disk UUID order, so names stay a list-map key.
func uniqueNames(vols []model.VirtualMachineVolumeStatus) {
	seen := map[string]int{}
	for i := range vols {
		n := vols[i].Name
		seen[n]++
		if seen[n] > 1 {
			vols[i].Name = fmt.Sprintf("%s-%d", n, seen[n])
		}
	}
}

// uniqueSize is the space the disk's own files take: the unique size of every file of
// every link of its chain in layoutEx.
func uniqueSize(layout *types.VirtualMachineFileLayoutEx, key int32) int64 {
	if layout == nil {
		return 0
	}
	sizes := make(map[int32]int64, len(layout.File))
	for _, f := range layout.File {
		sizes[f.Key] = f.UniqueSize
	}
	var n int64
	for _, d := range layout.Disk {
		if d.Key != key {
			continue
		}
		for _, unit := range d.Chain {
			for _, k := range unit.FileKey {
				n += sizes[k]
			}
		}
	}
	return n
}

// diskFileTypes are the layoutEx file types that belong to disks; every other file counts
// as usage.other.
var diskFileTypes = map[types.VirtualMachineFileLayoutExFileType]bool{
	types.VirtualMachineFileLayoutExFileTypeDiskDescriptor:   true,
	types.VirtualMachineFileLayoutExFileTypeDiskExtent:       true,
	types.VirtualMachineFileLayoutExFileTypeDigestDescriptor: true,
	types.VirtualMachineFileLayoutExFileTypeDigestExtent:     true,
}

// usage is status.storage: requested and used by the Classic volumes, other files, and
// the quota charge total = requested.disks + usage.other.
func usage(vols []model.VirtualMachineVolumeStatus, layout *types.VirtualMachineFileLayoutEx) *model.VirtualMachineStorageStatus {
	var requested, used, other int64
	for _, v := range vols {
		if v.Type != model.VolumeTypeClassic {
			continue
		}
		requested += v.Requested.Value()
		used += v.Used.Value()
	}
	if layout != nil {
		for _, f := range layout.File {
			if !diskFileTypes[types.VirtualMachineFileLayoutExFileType(f.Type)] {
				other += f.UniqueSize
			}
		}
	}
	return &model.VirtualMachineStorageStatus{
		Total:     sizeQuantity(requested + other),
		Requested: &model.VirtualMachineStorageStatusRequested{Disks: sizeQuantity(requested)},
		Usage:     &model.VirtualMachineStorageStatusUsage{Disks: sizeQuantity(used), Other: sizeQuantity(other)},
	}
}

// controllers reports the storage controllers with the disks and CD-ROMs on them, found
// by each device's controller key (vcsim never fills a controller's own device list).
func controllers(devices object.VirtualDeviceList) []model.VirtualControllerStatus {
	var out []model.VirtualControllerStatus
	for _, d := range devices {
		typ, bus, ok := controllerID(d)
		if !ok {
			continue
		}
		key := d.GetVirtualDevice().Key
		c := model.VirtualControllerStatus{BusNumber: bus, Type: typ, DeviceKey: key}
		for _, child := range devices {
			v := child.GetVirtualDevice()
			if v.ControllerKey != key || v.UnitNumber == nil {
				continue
			}
			switch child.(type) {
			case *types.VirtualDisk:
				c.Devices = append(c.Devices, model.VirtualDeviceStatus{Type: model.DeviceTypeDisk, UnitNumber: *v.UnitNumber})
			case *types.VirtualCdrom:
				c.Devices = append(c.Devices, cdromStatus(v, *v.UnitNumber))
			}
		}
		slices.SortFunc(c.Devices, func(a, b model.VirtualDeviceStatus) int { return cmp.Compare(a.UnitNumber, b.UnitNumber) })
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b model.VirtualControllerStatus) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.BusNumber, b.BusNumber))
	})
	return out
}

// cdromStatus is a CD-ROM's place, ISO file and connection state.
func cdromStatus(v *types.VirtualDevice, unit int32) model.VirtualDeviceStatus {
	out := model.VirtualDeviceStatus{Type: model.DeviceTypeCDROM, UnitNumber: unit}
	if b, ok := v.Backing.(types.BaseVirtualDeviceFileBackingInfo); ok {
		out.FileName = b.GetVirtualDeviceFileBackingInfo().FileName
	}
	if c := v.Connectable; c != nil {
		out.Connected, out.StartConnected, out.AllowGuestControl = ptr(c.Connected), ptr(c.StartConnected), ptr(c.AllowGuestControl)
	}
	return out
}

// nameCdroms names each CD-ROM in the status after the spec.hardware.cdrom entry placed
// at its controller and unit.
func nameCdroms(ctrls []model.VirtualControllerStatus, hw *model.VirtualMachineHardwareSpec) {
	if hw == nil {
		return
	}
	names := map[slot]string{}
	for _, c := range hw.Cdrom {
		if c.ControllerBusNumber != nil && c.UnitNumber != nil {
			names[slot{c.ControllerType, *c.ControllerBusNumber, *c.UnitNumber}] = c.Name
		}
	}
	for i := range ctrls {
		for j := range ctrls[i].Devices {
			d := &ctrls[i].Devices[j]
			if d.Type == model.DeviceTypeCDROM {
				d.Name = names[slot{ctrls[i].Type, ctrls[i].BusNumber, d.UnitNumber}]
			}
		}
	}
}

// sizeQuantity renders a size in bytes as Kubernetes does: a binary suffix when it divides evenly (20Gi).
func sizeQuantity(n int64) *resource.Quantity { return resource.NewQuantity(n, resource.BinarySI) }

func ptr[T any](v T) *T { return &v }
