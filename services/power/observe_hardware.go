package power

import (
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// hardwareProperties are what the class merge, the boot options and the hardware upgrade
// read of a VM: its devices (vGPUs, and the disks and adapters a boot order names), its
// hardware version, boot options and firmware, and the record of its class's extraConfig.
var hardwareProperties = []string{
	"config.hardware.device", "config.version", "config.bootOptions", "config.firmware",
	`config.extraConfig["` + vcenter.KeyClassExtraConfig + `"]`,
}

// vmHardware is what observe read of hardwareProperties.
type vmHardware struct {
	devices     []types.BaseVirtualDevice
	version     int32
	bootOptions *types.VirtualMachineBootOptions
	firmware    string
	classKeys   []string // the extraConfig keys the VM's class gave it
}

// hardwareOf reads cfg's hardwareProperties and adds the vGPUs and the hardware version to
// the status.
func hardwareOf(cfg *types.VirtualMachineConfigInfo, st *model.VirtualMachineHardwareStatus) vmHardware {
	hw := vmHardware{devices: cfg.Hardware.Device, version: vcenter.HardwareVersion(cfg.Version),
		bootOptions: cfg.BootOptions, firmware: cfg.Firmware}
	for _, o := range cfg.ExtraConfig {
		if opt := o.GetOptionValue(); opt.Key == vcenter.KeyClassExtraConfig {
			v, _ := opt.Value.(string)
			hw.classKeys = vcenter.ParseExtraConfigKeys(v)
		}
	}
	st.VGPUs = vGPUs(hw.devices)
	return hw
}

// vGPUs are the VM's NVIDIA vGPUs: PCI passthrough devices with a vmiop backing.
func vGPUs(devices []types.BaseVirtualDevice) []model.VirtualMachineHardwareVGPUStatus {
	var out []model.VirtualMachineHardwareVGPUStatus
	for _, d := range devices {
		p, ok := d.(*types.VirtualPCIPassthrough)
		if !ok {
			continue
		}
		b, ok := p.Backing.(*types.VirtualPCIPassthroughVmiopBackingInfo)
		if !ok {
			continue
		}
		migration := model.VGPUMigrationNone
		switch {
		case b.EnhancedMigrateCapability != nil && *b.EnhancedMigrateCapability:
			migration = model.VGPUMigrationEnhanced
		case b.MigrateSupported != nil && *b.MigrateSupported:
			migration = model.VGPUMigrationNormal
		}
		out = append(out, model.VirtualMachineHardwareVGPUStatus{Type: model.VGPUTypeNvidia, Profile: b.Vgpu, MigrationType: migration})
	}
	return out
}

// passthroughOf are the VM's vGPUs and dynamic DirectPath I/O devices.
func passthroughOf(devices []types.BaseVirtualDevice) []*types.VirtualPCIPassthrough {
	var out []*types.VirtualPCIPassthrough
	for _, d := range devices {
		if p, ok := d.(*types.VirtualPCIPassthrough); ok {
			switch p.Backing.(type) {
			case *types.VirtualPCIPassthroughVmiopBackingInfo, *types.VirtualPCIPassthroughDynamicBackingInfo:
				out = append(out, p)
			}
		}
	}
	return out
}
