package storage

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// attachedTo names the vSphere VMs that have a disk backed by the file path.
func (v *volumes) attachedTo(ctx context.Context, path string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	m := view.NewManager(v.vc.Client)
	cv, err := m.CreateContainerView(ctx, v.vc.ServiceContent.RootFolder, []string{"VirtualMachine"}, true)
	if err != nil {
		return nil, fmt.Errorf("list VMs: %w", err)
	}
	defer func() { _ = cv.Destroy(context.WithoutCancel(ctx)) }()
	var vms []mo.VirtualMachine
	if err := cv.Retrieve(ctx, []string{"VirtualMachine"}, []string{"name", "config.hardware.device"}, &vms); err != nil {
		return nil, fmt.Errorf("read VMs' disks: %w", err)
	}
	var out []string
	for _, vm := range vms {
		if vm.Config == nil {
			continue
		}
		for _, d := range vm.Config.Hardware.Device {
			disk, ok := d.(*types.VirtualDisk)
			if !ok {
				continue
			}
			if b, ok := disk.Backing.(types.BaseVirtualDeviceFileBackingInfo); ok && b.GetVirtualDeviceFileBackingInfo().FileName == path {
				out = append(out, vm.Name)
				break
			}
		}
	}
	return out, nil
}
