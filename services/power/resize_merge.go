package power

import (
	"slices"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// firstPassthroughKey is the temporary key of the first passthrough device a resize adds.
const firstPassthroughKey = -200

// resizeSpec is the reconfiguration to target's class, the same merge placement creates
// VMs with: its settings (those the previous class set and target does not go back to
// vSphere's defaults), CPU and memory with reservations and limits replacing what the
// previous class gave (those target leaves unset go back to none: reservation 0, no
// limit), its extraConfig (the keys the previous class gave and target does not are
// removed), its vGPUs and dynamic DirectPath I/O devices (the VM's that target lacks are
// removed, those it lacks added), and the record of target. What the VM's spec sets
// itself (guest ID, firmware) is left to the spec.
func resizeSpec(target *targetClass, hostMHz int64, hw vmHardware, spec model.VirtualMachineSpec) types.VirtualMachineConfigSpec {
	cs := withDefaults(target.hw.Settings())
	sized := target.hw.ConfigSpec(hostMHz)
	cs.NumCPUs, cs.MemoryMB = sized.NumCPUs, sized.MemoryMB
	cs.CpuAllocation, cs.MemoryAllocation = completeAllocation(sized.CpuAllocation), completeAllocation(sized.MemoryAllocation)
	if spec.GuestID != "" {
		cs.GuestId = ""
	}
	if spec.BootOptions != nil && spec.BootOptions.Firmware != "" {
		cs.Firmware = ""
	}
	cs.ExtraConfig = append(extraConfigChanges(target.hw, hw.classKeys),
		vcenter.AppliedClassOption(target.applied), target.hw.ExtraConfigKeysOption())
	cs.DeviceChange = passthroughChanges(passthroughOf(hw.devices), target.hw.Passthrough)
	return cs
}

// withDefaults sets the class settings cs leaves unset to vSphere's defaults, so that a
// resize undoes what the previous class set.
func withDefaults(cs types.VirtualMachineConfigSpec) types.VirtualMachineConfigSpec {
	for _, b := range []**bool{&cs.CpuHotAddEnabled, &cs.CpuHotRemoveEnabled, &cs.MemoryHotAddEnabled,
		&cs.NestedHVEnabled, &cs.VPMCEnabled, &cs.MemoryReservationLockedToMax} {
		if *b == nil {
			*b = types.NewBool(false)
		}
	}
	if cs.LatencySensitivity == nil {
		cs.LatencySensitivity = &types.LatencySensitivity{Level: types.LatencySensitivitySensitivityLevelNormal}
	}
	return cs
}

// extraConfigChanges sets the class's extraConfig and removes (an empty value) the keys
// the previous class gave that it does not.
func extraConfigChanges(hw vcenter.ClassHardware, previous []string) []types.BaseOptionValue {
	out := slices.Clone(hw.ExtraConfig)
	for _, k := range previous {
		if !slices.ContainsFunc(hw.ExtraConfig, func(o types.BaseOptionValue) bool { return o.GetOptionValue().Key == k }) {
			out = append(out, &types.OptionValue{Key: k, Value: ""})
		}
	}
	return out
}

// passthroughChanges removes the devices of have that want lacks and adds those of want
// that have lacks, each matched once (two vGPUs of one profile are two devices).
func passthroughChanges(have, want []*types.VirtualPCIPassthrough) []types.BaseVirtualDeviceConfigSpec {
	var changes []types.BaseVirtualDeviceConfigSpec
	missing := slices.Clone(want)
	for _, h := range have {
		i := slices.IndexFunc(missing, func(w *types.VirtualPCIPassthrough) bool { return vcenter.SamePassthrough(h, w) })
		if i >= 0 {
			missing = slices.Delete(missing, i, i+1)
			continue
		}
		changes = append(changes, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationRemove, Device: h})
	}
	return append(changes, vcenter.PassthroughAdds(missing, firstPassthroughKey)...)
}
