package placement

import (
	"encoding/json"
	"testing"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// gpuClassConfigSpec is a class ConfigSpec with extraConfig, a vGPU profile, CPU hot-add
// and nested virtualization.
const gpuClassConfigSpec = `{"_typeName":"VirtualMachineConfigSpec","numCPUs":2,"memoryMB":2048,
	"cpuHotAddEnabled":true,"nestedHVEnabled":true,
	"extraConfig":[{"_typeName":"OptionValue","key":"class.key","value":{"_typeName":"string","_value":"class-value"}}],
	"deviceChange":[{"_typeName":"VirtualDeviceConfigSpec","operation":"add","device":{"_typeName":"VirtualPCIPassthrough","key":-50,
		"backing":{"_typeName":"VirtualPCIPassthroughVmiopBackingInfo","vgpu":"grid_p40-1q"}}}]}`

// A VM of a class whose ConfigSpec carries extraConfig, a vGPU and CPU hot-add is
// deployed with all three in vcsim, its memory reserved whole for the vGPU and the
// record of the class's extraConfig keys.
func TestCreatesVMWithClassConfigSpec(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	cls := map[string]any{
		"apiVersion": model.GroupVMOperator + "/" + model.VersionVMOperator, "kind": "VirtualMachineClass",
		"metadata": map[string]any{"name": "gpu-class", "namespace": testNamespace},
		"spec":     map[string]any{"configSpec": json.RawMessage(gpuClassConfigSpec)},
	}
	h.putObject(cls)
	h.runService()

	v := newTestVM("gpu-vm")
	v.className = "gpu-class"
	h.putVM(v, false)
	h.waitSlice(v.ref, "created", created)

	vms := h.vmsOf(v.uid)
	if len(vms) != 1 {
		t.Fatalf("%d VMs carry uid %s, want 1", len(vms), v.uid)
	}
	cfg := vms[0].Config
	if got := extraConfig(vms[0], "class.key"); got != "class-value" {
		t.Errorf("extraConfig class.key = %q, want class-value", got)
	}
	if got := extraConfig(vms[0], vcenter.KeyClassExtraConfig); got != `["class.key"]` {
		t.Errorf("record of the class's extraConfig keys = %q", got)
	}
	if cfg.CpuHotAddEnabled == nil || !*cfg.CpuHotAddEnabled || cfg.NestedHVEnabled == nil || !*cfg.NestedHVEnabled {
		t.Errorf("cpuHotAddEnabled %v, nestedHVEnabled %v: want both true", cfg.CpuHotAddEnabled, cfg.NestedHVEnabled)
	}
	if cfg.MemoryReservationLockedToMax == nil || !*cfg.MemoryReservationLockedToMax {
		t.Error("the memory of a VM with a vGPU is not reserved whole")
	}
	var profiles []string
	for _, d := range cfg.Hardware.Device {
		if p, ok := d.(*types.VirtualPCIPassthrough); ok {
			if b, ok := p.Backing.(*types.VirtualPCIPassthroughVmiopBackingInfo); ok {
				profiles = append(profiles, b.Vgpu)
			}
		}
	}
	if len(profiles) != 1 || profiles[0] != "grid_p40-1q" {
		t.Errorf("vGPUs %v, want [grid_p40-1q]", profiles)
	}
	if cfg.Hardware.NumCPU != 2 || cfg.Hardware.MemoryMB != 2048 {
		t.Errorf("%d CPUs %d MB, want 2 and 2048", cfg.Hardware.NumCPU, cfg.Hardware.MemoryMB)
	}
}
