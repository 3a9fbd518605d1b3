package storage

import (
	"context"
	"errors"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// registeredClassic are the disks (UUIDs) of the VM, not reported as their entries'
// volumes yet, that a registration already made a claim of: a registration that cannot
// finish (another disk's failed) leaves them so until it does. Their claims charge them
// (quota counts claims), so the VM's status.storage does not.
func (h *handler) registeredClassic(ctx context.Context, vm *model.VirtualMachine, mvm mo.VirtualMachine, managed map[int32]bool) (map[string]bool, error) {
	out := map[string]bool{}
	if model.Upgraded(vm, model.BuildVersion) {
		return out, nil // every image disk's entry names its claim
	}
	devices := object.VirtualDeviceList(mvm.Config.Hardware.Device)
	for _, dev := range devices.SelectByType((*types.VirtualDisk)(nil)) {
		s, ok := deviceSlot(devices, dev)
		if !ok || managed[dev.GetVirtualDevice().Key] {
			continue
		}
		for _, v := range vm.Spec.Volumes {
			if at, ok := volumeSlot(v); !ok || at != s {
				continue
			}
			c, err := h.readClaim(ctx, vm.Namespace, claimName(v))
			if errors.Is(err, errNoClaim) {
				break
			}
			if err != nil {
				return nil, err
			}
			if c.fromImage && c.owner.UID == vm.UID && c.volumeID != "" {
				out[vcenter.BackingOf(dev.(*types.VirtualDisk)).UUID] = true
			}
			break
		}
	}
	return out, nil
}
