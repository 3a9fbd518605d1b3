package storage

import (
	"context"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"

	"github.com/vmop/vmop/pkg/vcenter"
)

// vmProperties are what the service reads of a VM: its devices, its files (the boot disk
// goes beside them), whether it is on (disks are hot-added and removed differently,
// changed block tracking changes only while off) and whether it tracks changed blocks.
var vmProperties = []string{"config.hardware.device", "config.files.vmPathName", "config.changeTrackingEnabled", "layoutEx", "runtime.powerState"}

// readVM reads the VM placement created (vcenter.ReadVMConfig) once its tasks are done.
func readVM(ctx context.Context, c *govmomi.Client, moref, instanceUUID string) (mo.VirtualMachine, *object.VirtualMachine, error) {
	return vcenter.ReadVMConfig(ctx, c, moref, instanceUUID, vmProperties)
}
