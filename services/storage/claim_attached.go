package storage

import (
	"context"
	"fmt"
	"slices"

	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
)

// attachedTo names the vSphere VMs that have a disk backed by the file path. vSphere tells
// which VMs use a disk only through vslm's associations, which vcsim lacks, so this reads
// every VM, on every release of a claim no spec names: of each, only its disks' chains of
// file names (layout.disk), a fraction of its devices' description.
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
	if err := cv.Retrieve(ctx, []string{"VirtualMachine"}, []string{"name", "layout.disk"}, &vms); err != nil {
		return nil, fmt.Errorf("read VMs' disks: %w", err)
	}
	var out []string
	for _, vm := range vms {
		if vm.Layout == nil {
			continue
		}
		for _, d := range vm.Layout.Disk {
			if slices.Contains(d.DiskFile, path) {
				out = append(out, vm.Name)
				break
			}
		}
	}
	return out, nil
}
