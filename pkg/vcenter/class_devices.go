package vcenter

import (
	"slices"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
)

// settingsOf is cs without what the merge treats apart: CPU, memory, their allocations,
// devices, extraConfig and the hardware version.
func settingsOf(cs types.VirtualMachineConfigSpec) types.VirtualMachineConfigSpec {
	cs.NumCPUs, cs.MemoryMB = 0, 0
	cs.CpuAllocation, cs.MemoryAllocation = nil, nil
	cs.DeviceChange, cs.ExtraConfig, cs.Version = nil, nil, ""
	return cs
}

// withClassDevices adds to have the vGPUs and dynamic DirectPath I/O devices of a class's
// spec.hardware.devices that the ConfigSpec does not already add.
func withClassDevices(have []*types.VirtualPCIPassthrough, devs model.VirtualDevices) []*types.VirtualPCIPassthrough {
	out := slices.Clone(have)
	for _, g := range devs.VGPUDevices {
		d := NewVGPU(g.ProfileName)
		if !slices.ContainsFunc(have, func(h *types.VirtualPCIPassthrough) bool { return SamePassthrough(h, d) }) {
			out = append(out, d)
		}
	}
	for _, p := range devs.DynamicDirectPathIODevices {
		d := &types.VirtualPCIPassthrough{VirtualDevice: types.VirtualDevice{
			Backing: &types.VirtualPCIPassthroughDynamicBackingInfo{
				AllowedDevice: []types.VirtualPCIPassthroughAllowedDevice{{VendorId: int32(p.VendorID), DeviceId: int32(p.DeviceID)}},
				CustomLabel:   p.CustomLabel,
			},
		}}
		if !slices.ContainsFunc(have, func(h *types.VirtualPCIPassthrough) bool { return SamePassthrough(h, d) }) {
			out = append(out, d)
		}
	}
	return out
}

// NewVGPU is a vGPU device of the profile.
func NewVGPU(profile string) *types.VirtualPCIPassthrough {
	return &types.VirtualPCIPassthrough{VirtualDevice: types.VirtualDevice{
		Backing: &types.VirtualPCIPassthroughVmiopBackingInfo{Vgpu: profile},
	}}
}

// SamePassthrough tells that a and b are the same vGPU profile, or dynamic DirectPath I/O
// devices with the same allowed devices and label.
func SamePassthrough(a, b *types.VirtualPCIPassthrough) bool {
	switch ab := a.Backing.(type) {
	case *types.VirtualPCIPassthroughVmiopBackingInfo:
		bb, ok := b.Backing.(*types.VirtualPCIPassthroughVmiopBackingInfo)
		return ok && ab.Vgpu == bb.Vgpu
	case *types.VirtualPCIPassthroughDynamicBackingInfo:
		bb, ok := b.Backing.(*types.VirtualPCIPassthroughDynamicBackingInfo)
		if !ok || ab.CustomLabel != bb.CustomLabel || len(ab.AllowedDevice) != len(bb.AllowedDevice) {
			return false
		}
		for i := range ab.AllowedDevice {
			x, y := ab.AllowedDevice[i], bb.AllowedDevice[i]
			if x.VendorId != y.VendorId || x.DeviceId != y.DeviceId {
				return false
			}
		}
		return true
	}
	return false
}

// PassthroughAdds are device changes adding devs, with new negative keys from firstKey
// down.
func PassthroughAdds(devs []*types.VirtualPCIPassthrough, firstKey int32) []types.BaseVirtualDeviceConfigSpec {
	var out []types.BaseVirtualDeviceConfigSpec
	for i, d := range devs {
		c := *d
		c.Key = firstKey - int32(i)
		out = append(out, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationAdd, Device: &c})
	}
	return out
}
