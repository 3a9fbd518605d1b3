package placement

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"slices"

	"github.com/vmware/govmomi/vim25/types"
	"github.com/vmware/govmomi/vim25/xml"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// vmIdentity is what names a VM in vCenter and ties it to its object.
type vmIdentity struct {
	namespace, name, uid string
}

// createSpec is the VM's configuration at create: the class's whole ConfigSpec merged as
// VM Operator does (its settings, CPU and memory with their policies at the host's clock
// hostMHz, extraConfig, vGPUs and dynamic DirectPath I/O devices) and the record that the
// VM has it; the spec's UUIDs, guest ID and firmware; the hardware version (api-rules
// §7.12); and the ExtraConfig keys naming the object. NICs are network's (it takes their
// adapter types from the class), disks, controllers and CD-ROMs storage's, a vTPM crypto's (but the
// vTPM a VM template item's deploy copies, which configure renews: vTPMRenewal).
func createSpec(id vmIdentity, vm model.VirtualMachineSpec, cls *class, hostMHz int64, imageHW int32) types.VirtualMachineConfigSpec {
	cs := cls.hw.Settings()
	sized := cls.hw.ConfigSpec(hostMHz)
	cs.NumCPUs, cs.MemoryMB, cs.CpuAllocation, cs.MemoryAllocation = sized.NumCPUs, sized.MemoryMB, sized.CpuAllocation, sized.MemoryAllocation
	cs.Uuid, cs.InstanceUuid = vm.BiosUUID, vm.InstanceUUID
	if vm.GuestID != "" {
		cs.GuestId = vm.GuestID
	}
	if bo := vm.BootOptions; bo != nil && bo.Firmware != "" {
		cs.Firmware = string(bo.Firmware)
	}
	cs.ExtraConfig = append(slices.Clip(cls.hw.ExtraConfig),
		&types.OptionValue{Key: vcenter.KeyObject, Value: id.namespace + "/" + id.name},
		&types.OptionValue{Key: vcenter.KeyUID, Value: id.uid},
		vcenter.AppliedClassOption(cls.applied),
		cls.hw.ExtraConfigKeysOption(),
	)
	cs.DeviceChange = vcenter.PassthroughAdds(cls.hw.Passthrough, firstPassthroughKey)
	if v := createVersion(vm, cls.hw, imageHW); v != imageHW {
		cs.Version = fmt.Sprintf("vmx-%d", v)
	}
	return cs
}

// firstPassthroughKey is the temporary key of the first passthrough device added at create,
// below those an image's devices use.
const firstPassthroughKey = -200

// passthroughHardwareVersion is the lowest hardware version with vGPUs and dynamic
// DirectPath I/O devices; pvcHardwareVersion the lowest VM Operator gives a VM with
// persistent volumes.
const (
	passthroughHardwareVersion = 17
	pvcHardwareVersion         = 15
)

// createVersion is the VM's hardware version at create (api-rules §7.12): the class's when
// it sets one, else the image's raised as needed for passthrough devices or the claims
// among the spec's volumes; then raised to the spec's minimum.
func createVersion(vm model.VirtualMachineSpec, hw vcenter.ClassHardware, imageHW int32) int32 {
	v := imageHW
	switch cv := vcenter.HardwareVersion(hw.Version); {
	case cv > 0:
		v = cv
	case len(hw.Passthrough) > 0:
		v = max(v, passthroughHardwareVersion)
	case hasClaims(vm.Volumes):
		v = max(v, pvcHardwareVersion)
	}
	return max(v, vm.MinHardwareVersion)
}

func hasClaims(volumes []model.VirtualMachineVolume) bool {
	return slices.ContainsFunc(volumes, func(v model.VirtualMachineVolume) bool { return v.PersistentVolumeClaim != nil })
}

// configSpecXML encodes cs as the content library's deploy takes it (provider XML):
// base64 of a vim25 VirtualMachineConfigSpec element.
func configSpecXML(cs types.VirtualMachineConfigSpec) (string, error) {
	var b bytes.Buffer
	start := xml.StartElement{Name: xml.Name{Local: "obj"}, Attr: []xml.Attr{
		{Name: xml.Name{Local: "xmlns:vim25"}, Value: "urn:vim25"},
		{Name: xml.Name{Local: "xmlns:xsi"}, Value: "http://www.w3.org/2001/XMLSchema-instance"},
		{Name: xml.Name{Local: "xsi:type"}, Value: "vim25:VirtualMachineConfigSpec"},
	}}
	if err := xml.NewEncoder(&b).EncodeElement(cs, start); err != nil {
		return "", fmt.Errorf("encode config spec: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes()), nil
}
