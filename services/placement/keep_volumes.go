package placement

import (
	"context"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// keepVolumes takes the VM's first-class disks (CNS volumes: the claims' disks, which name
// their volume in vDiskId) off the VM before it is destroyed, keeping their files: a claim
// outlives its VM (the seed's Detach vs. Delete), and vCenter's Destroy deletes every disk
// still attached. The claims decide their volumes' fate; a claim the VM owned is collected
// with it, and its volume deleted through CNS. Run again after a crash it finds none left.
func (r *reconciler) keepVolumes(ctx context.Context, id vmIdentity, v *vmState) error {
	vm := object.NewVirtualMachine(r.vc.c.Client, v.ref)
	var m mo.VirtualMachine
	if err := vm.Properties(ctx, v.ref, []string{"config.hardware.device"}, &m); err != nil {
		if isNotFound(err) {
			return nil
		}
		return err
	}
	if m.Config == nil {
		return nil
	}
	var changes []types.BaseVirtualDeviceConfigSpec
	for _, d := range m.Config.Hardware.Device {
		if disk, ok := d.(*types.VirtualDisk); ok && disk.VDiskId != nil && disk.VDiskId.Id != "" {
			// No FileOperation: the device goes, its file stays.
			changes = append(changes, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationRemove, Device: disk})
		}
	}
	if len(changes) == 0 {
		return nil
	}
	if err := r.reconfigure(ctx, id, v.ref, types.VirtualMachineConfigSpec{DeviceChange: changes}); !isNotFound(err) {
		return err
	}
	return nil
}
