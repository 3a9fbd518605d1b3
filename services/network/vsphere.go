package network

import (
	"context"
	"errors"
	"fmt"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/vcenter"
)

// vmProperties are what the service reads of a VM: its devices and ExtraConfig, and the
// guest (guestProperties).
var vmProperties = append([]string{
	"config.hardware.device", "config.extraConfig", "config.vAppConfig", "config.uuid",
	"config.tools.pendingCustomization", "config.guestId",
}, guestProperties...)

// readVM reads the VM placement created (vcenter.ReadVMConfig) once its tasks are done.
func readVM(ctx context.Context, c *govmomi.Client, moref, instanceUUID string) (mo.VirtualMachine, *object.VirtualMachine, error) {
	return vcenter.ReadVMConfig(ctx, c, moref, instanceUUID, vmProperties)
}

func reconfigure(ctx context.Context, vm *object.VirtualMachine, spec types.VirtualMachineConfigSpec) error {
	task, err := vm.Reconfigure(ctx, spec)
	if err == nil {
		_, err = vcenter.WaitTask(ctx, task)
	}
	if err != nil {
		return fmt.Errorf("reconfigure VM %s: %w", vm.Reference().Value, err)
	}
	return nil
}

// errNetworkNotFound: no vSphere network has the name.
var errNetworkNotFound = errors.New("network not found")

// networkBacking is the adapter backing that connects to the named network of the
// inventory's datacenter: a standard network or a distributed port group.
func networkBacking(ctx context.Context, c *govmomi.Client, name string) (types.BaseVirtualDeviceBackingInfo, error) {
	finder := find.NewFinder(c.Client)
	dc, err := finder.Datacenter(ctx, inventory.Datacenter)
	if err != nil {
		return nil, fmt.Errorf("find datacenter %s: %w", inventory.Datacenter, err)
	}
	finder.SetDatacenter(dc)
	n, err := finder.Network(ctx, name)
	var notFound *find.NotFoundError
	if errors.As(err, &notFound) {
		return nil, fmt.Errorf("%w: %q", errNetworkNotFound, name)
	}
	if err != nil {
		return nil, fmt.Errorf("find network %q: %w", name, err)
	}
	b, err := n.EthernetCardBackingInfo(ctx)
	if err != nil {
		return nil, fmt.Errorf("backing of network %q: %w", name, err)
	}
	if nb, ok := b.(*types.VirtualEthernetCardNetworkBackingInfo); ok && nb.Network == nil {
		// govmomi names a standard network only by name; the reference says which one.
		ref := n.Reference()
		nb.Network = &ref
	}
	return b, nil
}
