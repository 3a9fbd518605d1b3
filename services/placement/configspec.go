package placement

import (
	"bytes"
	"encoding/base64"
	"fmt"

	"github.com/vmware/govmomi/vim25/types"
	"github.com/vmware/govmomi/vim25/xml"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// classHardware is what a class gives a VM at create (api-rules §9.1.3): CPUs and memory
// from the class ConfigSpec (numCPUs, memoryMB) when it sets them, else from
// spec.hardware; reservations and limits from the ConfigSpec's cpuAllocation and
// memoryAllocation when present, else from spec.policies.resources.
type classHardware struct {
	cpus     int32
	memoryMB int64
	cpuAlloc *types.ResourceAllocationInfo // MHz
	memAlloc *types.ResourceAllocationInfo // MB
	// CPU request and limit from policies, in cores: MHz depend on the host's clock.
	cpuRequest, cpuLimit *resource.Quantity
}

func classHardwareOf(spec model.VirtualMachineClassSpec) (classHardware, error) {
	var hw classHardware
	var cs types.VirtualMachineConfigSpec
	if len(spec.ConfigSpec) > 0 && string(spec.ConfigSpec) != "null" {
		if err := types.NewJSONDecoder(bytes.NewReader(spec.ConfigSpec)).Decode(&cs); err != nil {
			return hw, fmt.Errorf("spec.configSpec is not a VirtualMachineConfigSpec: %w", err)
		}
	}
	hw.cpus, hw.memoryMB = cs.NumCPUs, cs.MemoryMB
	if h := spec.Hardware; h != nil {
		if hw.cpus == 0 {
			hw.cpus = int32(h.Cpus)
		}
		if hw.memoryMB == 0 && h.Memory != nil {
			hw.memoryMB = mebibytes(*h.Memory)
		}
	}
	hw.cpuAlloc, hw.memAlloc = cs.CpuAllocation, cs.MemoryAllocation
	if p := spec.Policies; p != nil && p.Resources != nil {
		req, lim := p.Resources.Requests, p.Resources.Limits
		if hw.memAlloc == nil && (memoryOf(req) != nil || memoryOf(lim) != nil) {
			hw.memAlloc = &types.ResourceAllocationInfo{}
			if q := memoryOf(req); q != nil {
				hw.memAlloc.Reservation = types.NewInt64(mebibytes(*q))
			}
			if q := memoryOf(lim); q != nil {
				hw.memAlloc.Limit = types.NewInt64(mebibytes(*q))
			}
		}
		if hw.cpuAlloc == nil {
			hw.cpuRequest, hw.cpuLimit = cpuOf(req), cpuOf(lim)
		}
	}
	return hw, nil
}

func memoryOf(r *model.VirtualMachineResourceSpec) *resource.Quantity {
	if r == nil {
		return nil
	}
	return r.Memory
}

func cpuOf(r *model.VirtualMachineResourceSpec) *resource.Quantity {
	if r == nil {
		return nil
	}
	return r.Cpu
}

// mebibytes rounds a memory quantity up to whole MiB, vSphere's memory unit.
func mebibytes(q resource.Quantity) int64 {
	return (q.Value() + 1<<20 - 1) >> 20
}

// cpuAllocation is the CPU reservation and limit in MHz on a host whose cores run at
// hostMHz (a policy asks in cores).
func (hw classHardware) cpuAllocation(hostMHz int64) *types.ResourceAllocationInfo {
	if hw.cpuAlloc != nil || hostMHz <= 0 || (hw.cpuRequest == nil && hw.cpuLimit == nil) {
		return hw.cpuAlloc
	}
	mhz := func(q *resource.Quantity) *int64 { return types.NewInt64(q.MilliValue() * hostMHz / 1000) }
	a := &types.ResourceAllocationInfo{}
	if hw.cpuRequest != nil {
		a.Reservation = mhz(hw.cpuRequest)
	}
	if hw.cpuLimit != nil {
		a.Limit = mhz(hw.cpuLimit)
	}
	return a
}

// vmIdentity is what names a VM in vCenter and ties it to its object.
type vmIdentity struct {
	namespace, name, uid string
}

// createSpec is the VM's configuration at create: the class hardware, the spec's UUIDs and
// guest ID, the image's hardware version raised to spec.minHardwareVersion, and the
// ExtraConfig keys naming the object. Devices are left to the image and the other
// services (disks: storage, NICs: network).
func createSpec(id vmIdentity, vm model.VirtualMachineSpec, hw classHardware, hostMHz int64, imageHW int32) types.VirtualMachineConfigSpec {
	cs := types.VirtualMachineConfigSpec{
		NumCPUs:          hw.cpus,
		MemoryMB:         hw.memoryMB,
		CpuAllocation:    hw.cpuAllocation(hostMHz),
		MemoryAllocation: hw.memAlloc,
		Uuid:             vm.BiosUUID,
		InstanceUuid:     vm.InstanceUUID,
		GuestId:          vm.GuestID,
		ExtraConfig: []types.BaseOptionValue{
			&types.OptionValue{Key: vcenter.KeyObject, Value: id.namespace + "/" + id.name},
			&types.OptionValue{Key: vcenter.KeyUID, Value: id.uid},
		},
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
