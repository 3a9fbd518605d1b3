package inventory

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/vcenter"
)

// TemplateFolder is the VM folder holding the VM templates that images of type VM name
// (VM Operator's VM-backed images: the provider item is an inventory VM, cloned to deploy).
const TemplateFolder = "vmop-templates"

// PhotonTemplate is the seeded VM template: the photon image as a template VM, with a
// boot disk (SCSI 0:0, 20Gi) and a data disk (SCSI 0:1, 10Gi).
const PhotonTemplate = "photonos-5-x64-template"

// TemplateSnapshot is the snapshot every seeded template has: the base a linked clone's
// child disks grow from (vCenter clones linked only from a snapshot).
const TemplateSnapshot = "base"

// vmTemplate is one template VM Seed creates.
type vmTemplate struct {
	name, guestID, firmware string
	hardwareVersion         int
	cpus, memoryMiB         int32
	disksGiB                []int64 // on ParaVirtual SCSI 0, units 0, 1, ...
}

var vmTemplates = []vmTemplate{
	{name: PhotonTemplate, guestID: "vmwarePhoton64Guest", firmware: "efi", hardwareVersion: 19,
		cpus: 2, memoryMiB: 2048, disksGiB: []int64{20, 10}},
}

// templates creates each template VM in TemplateFolder on SharedDatastore (every host
// mounts it, so a clone can land anywhere), snapshots it and marks it a template. A
// template left half made by an interrupted seed is finished.
func (s *seeder) templates(ctx context.Context) error {
	folder, err := s.vmFolder(ctx, TemplateFolder)
	if err != nil {
		return err
	}
	for _, t := range vmTemplates {
		if err := s.ensureTemplate(ctx, folder, t); err != nil {
			return fmt.Errorf("template %s: %w", t.name, err)
		}
	}
	return nil
}

// vmFolder is the VM folder name of the datacenter, created when missing.
func (s *seeder) vmFolder(ctx context.Context, name string) (*object.Folder, error) {
	ref, err := object.NewSearchIndex(s.c.Client).FindChild(ctx, s.folders.VmFolder, name)
	if err != nil {
		return nil, fmt.Errorf("find folder %s: %w", name, err)
	}
	if ref != nil {
		return object.NewFolder(s.c.Client, ref.Reference()), nil
	}
	f, err := s.folders.VmFolder.CreateFolder(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("create folder %s: %w", name, err)
	}
	return f, nil
}

func (s *seeder) ensureTemplate(ctx context.Context, folder *object.Folder, t vmTemplate) error {
	ref, err := object.NewSearchIndex(s.c.Client).FindChild(ctx, folder, t.name)
	if err != nil {
		return err
	}
	var vm *object.VirtualMachine
	if ref == nil {
		if vm, err = s.createTemplateVM(ctx, folder, t); err != nil {
			return err
		}
	} else {
		vm = object.NewVirtualMachine(s.c.Client, ref.Reference())
	}
	var m mo.VirtualMachine
	if err := vm.Properties(ctx, vm.Reference(), []string{"config.template", "snapshot"}, &m); err != nil {
		return err
	}
	if m.Config != nil && m.Config.Template {
		return nil
	}
	if m.Snapshot == nil {
		task, err := vm.CreateSnapshot(ctx, TemplateSnapshot, "base of linked clones", false, false)
		if err != nil {
			return err
		}
		if _, err := vcenter.WaitTask(ctx, task); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
	}
	return vm.MarkAsTemplate(ctx)
}

func (s *seeder) createTemplateVM(ctx context.Context, folder *object.Folder, t vmTemplate) (*object.VirtualMachine, error) {
	zone := Zones[0]
	pool, err := s.clusters[zone.Name].ResourcePool(ctx)
	if err != nil {
		return nil, err
	}
	ds, err := s.finder.Datastore(ctx, SharedDatastore)
	if err != nil {
		return nil, err
	}
	dsRef := ds.Reference()
	const scsiKey = -100
	changes := []types.BaseVirtualDeviceConfigSpec{&types.VirtualDeviceConfigSpec{
		Operation: types.VirtualDeviceConfigSpecOperationAdd,
		Device: &types.ParaVirtualSCSIController{VirtualSCSIController: types.VirtualSCSIController{
			VirtualController: types.VirtualController{VirtualDevice: types.VirtualDevice{Key: scsiKey}},
			SharedBus:         types.VirtualSCSISharingNoSharing, ScsiCtlrUnitNumber: 7,
		}},
	}}
	for i, gib := range t.disksGiB {
		changes = append(changes, &types.VirtualDeviceConfigSpec{
			Operation:     types.VirtualDeviceConfigSpecOperationAdd,
			FileOperation: types.VirtualDeviceConfigSpecFileOperationCreate,
			Device: &types.VirtualDisk{
				VirtualDevice: types.VirtualDevice{
					Key: int32(-1 - i), ControllerKey: scsiKey, UnitNumber: types.NewInt32(int32(i)),
					Backing: &types.VirtualDiskFlatVer2BackingInfo{
						VirtualDeviceFileBackingInfo: types.VirtualDeviceFileBackingInfo{Datastore: &dsRef},
						DiskMode:                     string(types.VirtualDiskModePersistent),
						ThinProvisioned:              types.NewBool(true),
					},
				},
				CapacityInBytes: gib << 30,
			},
		})
	}
	spec := types.VirtualMachineConfigSpec{
		Name: t.name, GuestId: t.guestID, Firmware: t.firmware, Version: fmt.Sprintf("vmx-%d", t.hardwareVersion),
		NumCPUs: t.cpus, MemoryMB: int64(t.memoryMiB),
		Files:        &types.VirtualMachineFileInfo{VmPathName: "[" + SharedDatastore + "]"},
		DeviceChange: changes,
	}
	task, err := folder.CreateVM(ctx, spec, pool, s.hosts[zone.Name][0])
	if err != nil {
		return nil, err
	}
	info, err := vcenter.WaitTask(ctx, task)
	if err != nil {
		return nil, fmt.Errorf("create: %w", err)
	}
	return object.NewVirtualMachine(s.c.Client, info.Result.(types.ManagedObjectReference)), nil
}
