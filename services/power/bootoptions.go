package power

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// defaultBootRetryDelayMs is vSphere's boot retry delay, which a VM gets when
// spec.bootOptions sets none.
const defaultBootRetryDelayMs = 10000

// syncBootOptions gives the VM spec.bootOptions (firmware, boot delay, boot order, boot
// retry, EFI secure boot, network boot protocol, entering setup) while it is powered off, which includes
// right before a power-on (admission forbids a change while the VM is desired on,
// BOOT-10). The VM's config.bootOptions and config.firmware are what was applied, so a
// redelivery finds nothing to do. hold says why the VM may not be powered on yet: a boot
// order device that is not there, or what vSphere refused.
func (r *reconciler) syncBootOptions(ctx context.Context, o reconcile.Object, vm *model.VirtualMachine, obs observation) (_ observation, hold string, _ error) {
	bo := vm.Spec.BootOptions
	if bo == nil || obs.power != model.PowerStateOff {
		return obs, "", nil
	}
	want, missing := bootOptionsOf(bo, obs.hw.devices, slicesStatus(o))
	if missing != "" {
		return obs, "the boot order (" + missing + ")", nil
	}
	var cs types.VirtualMachineConfigSpec
	if !reflect.DeepEqual(obs.hw.bootOptions, want) {
		cs.BootOptions = want
	}
	if bo.Firmware != "" && string(bo.Firmware) != obs.hw.firmware {
		cs.Firmware = string(bo.Firmware)
	}
	if cs.BootOptions == nil && cs.Firmware == "" {
		return obs, "", nil
	}
	task, err := obs.vm.Reconfigure(ctx, cs)
	if err == nil {
		_, err = vcenter.WaitTask(ctx, task)
	}
	switch {
	case err != nil && vcenter.IsFault(err):
		r.log.Warn("boot options refused", "vm", obs.uniqueID(), "err", err)
		return obs, fmt.Sprintf("the boot options, which vSphere refused: %v", err), nil
	case err != nil:
		return obs, "", fmt.Errorf("set the boot options of VM %s: %w", obs.uniqueID(), err)
	}
	obs, err = r.observe(ctx, obs)
	return obs, "", err
}

// bootOptionsOf is the whole of config.bootOptions that bo asks for (vSphere replaces it
// whole); missing names a boot order entry whose device the VM does not have yet.
func bootOptionsOf(bo *model.VirtualMachineBootOptions, devices []types.BaseVirtualDevice, st model.VirtualMachineStatus) (_ *types.VirtualMachineBootOptions, missing string) {
	out := &types.VirtualMachineBootOptions{
		BootDelay:            milliseconds(bo.BootDelay),
		EnterBIOSSetup:       types.NewBool(bo.EnterBootSetup == model.BootOptionEnabled),
		EfiSecureBootEnabled: types.NewBool(bo.EFISecureBoot == model.BootOptionEnabled),
		BootRetryEnabled:     types.NewBool(bo.BootRetry == model.BootOptionEnabled),
		BootRetryDelay:       defaultBootRetryDelayMs,
		NetworkBootProtocol:  string(types.VirtualMachineBootOptionsNetworkBootProtocolTypeIpv4),
	}
	if bo.BootRetryDelay != nil {
		out.BootRetryDelay = milliseconds(bo.BootRetryDelay)
	}
	if bo.NetworkBootProtocol == "IP6" {
		out.NetworkBootProtocol = string(types.VirtualMachineBootOptionsNetworkBootProtocolTypeIpv6)
	}
	for _, d := range bo.BootOrder {
		dev, ok := bootDevice(d, devices, st)
		if !ok {
			return nil, fmt.Sprintf("%s %q has no device yet", d.Type, d.Name)
		}
		out.BootOrder = append(out.BootOrder, dev)
	}
	return out, ""
}

// bootDevice is the boot order entry of d: a disk found by the UUID storage reports for
// the volume, an adapter by the device key network reports for the interface, the CD-ROM.
func bootDevice(d model.BootableDevice, devices []types.BaseVirtualDevice, st model.VirtualMachineStatus) (types.BaseVirtualMachineBootOptionsBootableDevice, bool) {
	switch d.Type {
	case model.BootDeviceCDRom:
		return &types.VirtualMachineBootOptionsBootableCdromDevice{}, true
	case model.BootDeviceNetwork:
		if st.Network != nil {
			for _, i := range st.Network.Interfaces {
				if i.Name == d.Name && i.DeviceKey != 0 {
					return &types.VirtualMachineBootOptionsBootableEthernetDevice{DeviceKey: i.DeviceKey}, true
				}
			}
		}
	case model.BootDeviceDisk:
		for _, v := range st.Volumes {
			if v.Name != d.Name || v.DiskUUID == "" {
				continue
			}
			for _, dev := range devices {
				if disk, ok := dev.(*types.VirtualDisk); ok && vcenter.BackingOf(disk).UUID == v.DiskUUID {
					return &types.VirtualMachineBootOptionsBootableDiskDevice{DeviceKey: disk.Key}, true
				}
			}
		}
	}
	return nil, false
}

func milliseconds(d *metav1.Duration) int64 {
	if d == nil {
		return 0
	}
	return d.Milliseconds()
}

// slicesStatus is what storage (volumes) and network (interfaces) report of the VM.
func slicesStatus(o reconcile.Object) model.VirtualMachineStatus {
	var st model.VirtualMachineStatus
	for _, svc := range []string{model.ServiceStorage, model.ServiceNetwork} {
		var part model.VirtualMachineStatus
		if s, ok := o.Slices[svc]; ok && json.Unmarshal(s.Status, &part) == nil {
			if part.Volumes != nil {
				st.Volumes = part.Volumes
			}
			if part.Network != nil {
				st.Network = part.Network
			}
		}
	}
	return st
}
