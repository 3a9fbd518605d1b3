package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// The boot disk. An ISO VM is created without disks (placement creates it empty); before
// its schema upgrade, so that the upgrade back-fills and registers it like an image's
// disk, storage gives it the boot disk spec.advanced.bootDiskCapacity or its class's
// ConfigSpec asks for, on the VM's datastore with its storage class's policy. For any
// VM, bootDiskCapacity then only ever grows that disk. Whether the disk exists is read
// from the VM, so a crash or redelivery adds it once.

// bootDisk is the VM's boot disk: its first disk that is not a claim's volume attached by
// vmop (those carry the volume in vDiskId). nil when it has none.
func bootDisk(devices object.VirtualDeviceList) *types.VirtualDisk {
	for _, d := range devices.SelectByType((*types.VirtualDisk)(nil)) {
		if disk := d.(*types.VirtualDisk); disk.VDiskId == nil || disk.VDiskId.Id == "" {
			return disk
		}
	}
	return nil
}

// addBootDisk returns the device changes that give an ISO VM without a boot disk the one
// it asks for, or why it cannot have it now; none when the VM needs none.
func (h *handler) addBootDisk(ctx context.Context, vm *model.VirtualMachine, mvm mo.VirtualMachine) ([]types.BaseVirtualDeviceConfigSpec, string, error) {
	devices := object.VirtualDeviceList(mvm.Config.Hardware.Device)
	if model.Upgraded(vm, model.BuildVersion) || bootDisk(devices) != nil || vm.Spec.Image == nil {
		return nil, "", nil
	}
	st, _, problem, err := imageStatus(ctx, h.js, vm.Namespace, *vm.Spec.Image)
	if err != nil || problem != "" || st.Type != model.ImageTypeISO {
		return nil, "", err // placement reports the image; only an ISO VM gets a disk here
	}
	capacity, err := h.bootDiskCapacity(ctx, vm)
	if err != nil || capacity == 0 {
		return nil, "", err
	}
	policy, err := h.register.policyOf(ctx, vm.Spec.StorageClass)
	if err != nil || policy.problem != "" {
		return nil, "boot disk " + policy.problem, err
	}
	var home object.DatastorePath
	if mvm.Config.Files.VmPathName == "" || !home.FromString(mvm.Config.Files.VmPathName) {
		return nil, "", fmt.Errorf("VM %s: no datastore path of its files", mvm.Self.Value)
	}
	at, ok := bootDiskSlot(vm.Spec)
	if !ok {
		return nil, "the boot disk finds no free SCSI unit", nil
	}
	var changes []types.BaseVirtualDeviceConfigSpec
	var ctrlKey int32
	if ctrl := controllerAt(devices, at.typ, at.bus); ctrl != nil {
		ctrlKey = ctrl.GetVirtualDevice().Key
		if occupied(devices, ctrlKey, at.unit) {
			return nil, fmt.Sprintf("the boot disk's unit %s is taken", at), nil
		}
	} else { // placement chose a new ParaVirtual controller: added with the disk, key -1
		changes = controllerAdds([]wantController{{typ: at.typ, bus: at.bus, sharing: model.ControllerSharingModeNone}})
		ctrlKey = changes[0].GetVirtualDeviceConfigSpec().Device.GetVirtualDevice().Key
	}
	unit := at.unit
	disk := &types.VirtualDisk{
		VirtualDevice: types.VirtualDevice{
			Key: -2, ControllerKey: ctrlKey, UnitNumber: &unit,
			// A file name of only the datastore puts the disk in the VM's directory.
			Backing: provisioned(&types.VirtualDiskFlatVer2BackingInfo{
				VirtualDeviceFileBackingInfo: types.VirtualDeviceFileBackingInfo{FileName: "[" + home.Datastore + "]"},
				DiskMode:                     string(types.VirtualDiskModePersistent),
			}, vm.Spec.Advanced),
		},
		CapacityInBytes: capacity, CapacityInKB: capacity / 1024,
	}
	return append(changes, &types.VirtualDeviceConfigSpec{
		Operation: types.VirtualDeviceConfigSpecOperationAdd, FileOperation: types.VirtualDeviceConfigSpecFileOperationCreate,
		Device:  disk,
		Profile: []types.BaseVirtualMachineProfileSpec{&types.VirtualMachineDefinedProfileSpec{ProfileId: policy.policyID}},
	}), "", nil
}

// bootDiskSlot is where the boot disk goes: D18's choice for a volume placed before the
// spec's other unplaced volumes (the first SCSI controller with room, else a new one).
func bootDiskSlot(spec model.VirtualMachineSpec) (slot, bool) {
	s := model.VirtualMachineSpec{Hardware: cloneHardware(spec.Hardware), Volumes: []model.VirtualMachineVolume{{Name: "boot"}}}
	for _, v := range spec.Volumes {
		v.ControllerBusNumber, v.UnitNumber = clonePtr(v.ControllerBusNumber), clonePtr(v.UnitNumber)
		s.Volumes = append(s.Volumes, v)
	}
	model.PlaceVolumes(&s)
	b := s.Volumes[0]
	if b.ControllerBusNumber == nil || b.UnitNumber == nil {
		return slot{}, false
	}
	return slot{b.ControllerType, *b.ControllerBusNumber, *b.UnitNumber}, true
}

// bootDiskCapacity is the size the VM asks of its boot disk: spec.advanced.bootDiskCapacity,
// else the first disk of its class's ConfigSpec; 0 for none.
func (h *handler) bootDiskCapacity(ctx context.Context, vm *model.VirtualMachine) (int64, error) {
	if a := vm.Spec.Advanced; a != nil && a.BootDiskCapacity != nil {
		return a.BootDiskCapacity.Value(), nil
	}
	rec, err := readOwned(ctx, h.js, events.Ref{Plural: "virtualmachineclasses", Namespace: vm.Namespace, Name: vm.Spec.ClassName})
	if err != nil || !rec.live {
		return 0, err
	}
	var cls model.VirtualMachineClass
	if json.Unmarshal(rec.body, &cls) != nil || len(cls.Spec.ConfigSpec) == 0 {
		return 0, nil // placement reports an unreadable class
	}
	var cs types.VirtualMachineConfigSpec
	if types.NewJSONDecoder(strings.NewReader(string(cls.Spec.ConfigSpec))).Decode(&cs) != nil {
		return 0, nil
	}
	for _, c := range cs.DeviceChange {
		if disk, ok := c.GetVirtualDeviceConfigSpec().Device.(*types.VirtualDisk); ok {
			if disk.CapacityInBytes > 0 {
				return disk.CapacityInBytes, nil
			}
			return disk.CapacityInKB * 1024, nil
		}
	}
	return 0, nil
}

// growBootDisk is the edit that grows the boot disk to spec.advanced.bootDiskCapacity, or
// why it does not: a disk is never shrunk.
func growBootDisk(vm *model.VirtualMachine, devices object.VirtualDeviceList) (types.BaseVirtualDeviceConfigSpec, string) {
	a := vm.Spec.Advanced
	disk := bootDisk(devices)
	if a == nil || a.BootDiskCapacity == nil || disk == nil {
		return nil, ""
	}
	want := a.BootDiskCapacity.Value()
	switch {
	case want > disk.CapacityInBytes:
		return growDisk(disk, want), ""
	case want < disk.CapacityInBytes:
		return nil, fmt.Sprintf("spec.advanced.bootDiskCapacity %s is less than the boot disk's %s: a disk is never shrunk",
			a.BootDiskCapacity, resource.NewQuantity(disk.CapacityInBytes, resource.BinarySI))
	}
	return nil, ""
}
