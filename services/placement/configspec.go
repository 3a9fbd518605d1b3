package placement

import (
	"bytes"
	"encoding/base64"
	"fmt"

	"github.com/vmware/govmomi/vim25/types"
	"github.com/vmware/govmomi/vim25/xml"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// vmIdentity is what names a VM in vCenter and ties it to its object.
type vmIdentity struct {
	namespace, name, uid string
}

// createSpec is the VM's configuration at create: the class hardware (CPU policies at the
// host's clock hostMHz) and the record that the VM has it, the spec's UUIDs and guest ID,
// the image's hardware version raised to spec.minHardwareVersion, and the ExtraConfig keys
// naming the object. Devices are left to the image and the other services (disks:
// storage, NICs: network).
func createSpec(id vmIdentity, vm model.VirtualMachineSpec, cls *class, hostMHz int64, imageHW int32) types.VirtualMachineConfigSpec {
	cs := cls.hw.ConfigSpec(hostMHz)
	cs.Uuid, cs.InstanceUuid, cs.GuestId = vm.BiosUUID, vm.InstanceUUID, vm.GuestID
	cs.ExtraConfig = []types.BaseOptionValue{
		&types.OptionValue{Key: vcenter.KeyObject, Value: id.namespace + "/" + id.name},
		&types.OptionValue{Key: vcenter.KeyUID, Value: id.uid},
		vcenter.AppliedClassOption(cls.applied),
	}
	if vm.MinHardwareVersion > imageHW {
		cs.Version = fmt.Sprintf("vmx-%d", vm.MinHardwareVersion)
	}
	return cs
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
