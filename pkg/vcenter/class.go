package vcenter

import (
	"encoding/json"

	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vmop/vmop/pkg/model"
)

// KeyAppliedClass records in the VM the class whose configuration it has (JSON of
// model.AppliedClass): written with the configuration it names, at create and by each
// resize, so a crash or a redelivery neither repeats nor loses a resize.
const KeyAppliedClass = "vmop.appliedClass"

// KeyClassExtraConfig records in the VM, with KeyAppliedClass, the extraConfig keys its
// class gave it (a JSON list): a resize to a class without one of them removes it.
const KeyClassExtraConfig = "vmop.classExtraConfig"

// ClassHardware is the CPU and memory part of what a class gives a VM (api-rules §9.1.3):
// CPUs and memory from the class ConfigSpec (numCPUs, memoryMB) when it sets them, else
// from spec.hardware; reservations and limits from the ConfigSpec's cpuAllocation and
// memoryAllocation when present, else from spec.policies.resources. Placement creates VMs
// with it and power resizes them to it.
type ClassHardware struct {
	CPUs     int32
	MemoryMB int64
	cpuAlloc *types.ResourceAllocationInfo // MHz
	memAlloc *types.ResourceAllocationInfo // MB
	// CPU request and limit from policies, in cores: MHz depend on the host's clock.
	cpuRequest, cpuLimit *resource.Quantity
	// VTPM: the ConfigSpec adds a virtual TPM, which the crypto service gives the VM (a vTPM
	// needs an encrypted VM home).
	VTPM bool
	// Passthrough are the class's vGPUs and dynamic DirectPath I/O devices: those of the
	// ConfigSpec and of spec.hardware.devices.
	Passthrough []*types.VirtualPCIPassthrough
	// ExtraConfig is the ConfigSpec's extraConfig.
	ExtraConfig []types.BaseOptionValue
	// Version is the ConfigSpec's hardware version (vmx-NN), "" when it sets none.
	Version string
	// settings is the rest of the ConfigSpec (hot-add, latency sensitivity, firmware,
	// nested virtualization, device groups, ...): what a VM of the class gets as it is.
	settings types.VirtualMachineConfigSpec
}

// ClassHardwareOf reads a class spec; an error says its ConfigSpec is not one a VM can be
// given (model.ClassConfigSpec).
func ClassHardwareOf(spec model.VirtualMachineClassSpec) (ClassHardware, error) {
	var hw ClassHardware
	cs, errs := model.ClassConfigSpec(spec.ConfigSpec)
	if len(errs) > 0 {
		return hw, errs.ToAggregate()
	}
	hw.CPUs, hw.MemoryMB = cs.NumCPUs, cs.MemoryMB
	if h := spec.Hardware; h != nil {
		if hw.CPUs == 0 {
			hw.CPUs = int32(h.Cpus)
		}
		if hw.MemoryMB == 0 && h.Memory != nil {
			hw.MemoryMB = Mebibytes(*h.Memory)
		}
	}
	hw.cpuAlloc, hw.memAlloc = cs.CpuAllocation, cs.MemoryAllocation
	for _, dc := range cs.DeviceChange {
		switch d := dc.GetVirtualDeviceConfigSpec().Device.(type) {
		case *types.VirtualTPM:
			hw.VTPM = true
		case *types.VirtualPCIPassthrough:
			hw.Passthrough = append(hw.Passthrough, d)
		}
	}
	if h := spec.Hardware; h != nil && h.Devices != nil {
		hw.Passthrough = withClassDevices(hw.Passthrough, *h.Devices)
	}
	hw.ExtraConfig = cs.ExtraConfig
	hw.Version = cs.Version
	hw.settings = settingsOf(cs)
	if p := spec.Policies; p != nil && p.Resources != nil {
		req, lim := p.Resources.Requests, p.Resources.Limits
		if hw.memAlloc == nil && (memoryOf(req) != nil || memoryOf(lim) != nil) {
			hw.memAlloc = &types.ResourceAllocationInfo{}
			if q := memoryOf(req); q != nil {
				hw.memAlloc.Reservation = types.NewInt64(Mebibytes(*q))
			}
			if q := memoryOf(lim); q != nil {
				hw.memAlloc.Limit = types.NewInt64(Mebibytes(*q))
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

// Mebibytes rounds a memory quantity up to whole MiB, vSphere's memory unit.
func Mebibytes(q resource.Quantity) int64 {
	return (q.Value() + 1<<20 - 1) >> 20
}

// NeedsHostMHz tells that the CPU allocation depends on the clock of the VM's host: the
// class asks for CPU in cores.
func (hw ClassHardware) NeedsHostMHz() bool {
	return hw.cpuAlloc == nil && (hw.cpuRequest != nil || hw.cpuLimit != nil)
}

// ConfigSpec is the CPU and memory part of a VM's configuration on a host whose cores run
// at hostMHz (0 when unknown: a CPU policy in cores is then left out). Allocations the
// class does not set are nil: vCenter's defaults at create, left as they are otherwise.
func (hw ClassHardware) ConfigSpec(hostMHz int64) types.VirtualMachineConfigSpec {
	return types.VirtualMachineConfigSpec{
		NumCPUs: hw.CPUs, MemoryMB: hw.MemoryMB,
		CpuAllocation: hw.cpuAllocation(hostMHz), MemoryAllocation: hw.memAlloc,
	}
}

// Settings is the class's configuration besides CPU, memory, devices, extraConfig and
// hardware version: a VM with passthrough devices has its memory reserved whole, which
// vSphere requires of them, unless the class says otherwise.
func (hw ClassHardware) Settings() types.VirtualMachineConfigSpec {
	cs := hw.settings
	if len(hw.Passthrough) > 0 && cs.MemoryReservationLockedToMax == nil {
		cs.MemoryReservationLockedToMax = types.NewBool(true)
	}
	return cs
}

// ExtraConfigKeysOption is the record of the extraConfig keys the class gives a VM.
func (hw ClassHardware) ExtraConfigKeysOption() *types.OptionValue {
	keys := []string{}
	for _, o := range hw.ExtraConfig {
		keys = append(keys, o.GetOptionValue().Key)
	}
	b, _ := json.Marshal(keys) // strings always marshal
	return &types.OptionValue{Key: KeyClassExtraConfig, Value: string(b)}
}

// ParseExtraConfigKeys reads a KeyClassExtraConfig record; nil for none.
func ParseExtraConfigKeys(s string) []string {
	var keys []string
	if json.Unmarshal([]byte(s), &keys) != nil {
		return nil
	}
	return keys
}

// cpuAllocation is the CPU reservation and limit in MHz on a host whose cores run at
// hostMHz (a policy asks in cores).
func (hw ClassHardware) cpuAllocation(hostMHz int64) *types.ResourceAllocationInfo {
	if !hw.NeedsHostMHz() || hostMHz <= 0 {
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

// AppliedClassOption is the ExtraConfig entry recording that the VM has class c's
// configuration.
func AppliedClassOption(c model.AppliedClass) *types.OptionValue {
	return &types.OptionValue{Key: KeyAppliedClass, Value: c.String()}
}
