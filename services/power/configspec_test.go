package power_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// gpuClassSpec: 2 CPUs and 4 GiB, with extraConfig, a vGPU profile and CPU hot-add in its
// ConfigSpec.
func gpuClassSpec() model.VirtualMachineClassSpec {
	spec := hardwareClass(2, "4Gi", nil)
	spec.ConfigSpec = json.RawMessage(`{"_typeName":"VirtualMachineConfigSpec","cpuHotAddEnabled":true,
		"extraConfig":[{"_typeName":"OptionValue","key":"class.key","value":{"_typeName":"string","_value":"gpu"}}],
		"deviceChange":[{"_typeName":"VirtualDeviceConfigSpec","operation":"add","device":{"_typeName":"VirtualPCIPassthrough","key":-50,
			"backing":{"_typeName":"VirtualPCIPassthroughVmiopBackingInfo","vgpu":"grid_p40-1q"}}}]}`)
	return spec
}

func vgpuProfiles(cfg types.VirtualMachineConfigInfo) []string {
	var out []string
	for _, d := range cfg.Hardware.Device {
		if p, ok := d.(*types.VirtualPCIPassthrough); ok {
			if b, ok := p.Backing.(*types.VirtualPCIPassthroughVmiopBackingInfo); ok {
				out = append(out, b.Vgpu)
			}
		}
	}
	return out
}

func extraValue(cfg types.VirtualMachineConfigInfo, key string) (string, bool) {
	for _, o := range cfg.ExtraConfig {
		if ov := o.GetOptionValue(); ov.Key == key {
			s, _ := ov.Value.(string)
			return s, true
		}
	}
	return "", false
}

func reportsVGPUs(profiles ...string) func(sliceStatus) bool {
	return func(s sliceStatus) bool {
		var got []string
		if hw := s.Status.Hardware; hw != nil {
			for _, g := range hw.VGPUs {
				got = append(got, g.Profile)
			}
		}
		return slices.Equal(got, profiles)
	}
}

// A resize while off applies the class's whole ConfigSpec: to the GPU class adds its
// vGPU, extraConfig and CPU hot-add (status.hardware.vGPUs lists the profile); back to a
// class without them removes the vGPU and the extraConfig key and turns hot-add off.
func TestResizeAppliesClassConfigSpec(t *testing.T) {
	h := start(t)
	h.putClass(inventory.SeedClassName, seedClassSpec())
	gpu := h.putClass("gpu", gpuClassSpec())
	plain := h.putClass("plain", hardwareClass(2, "4Gi", nil))

	v := h.createVM("class-configspec")
	v.obj.Spec.PowerState = model.PowerStateOff
	pendingResize(v, gpu.obj.Name)
	h.putSpec(v)
	h.readyInputs(v)
	s := h.waitStatus(v, "off with the GPU class's vGPU", func(s sliceStatus) bool {
		return synced(model.PowerStateOff)(s) && classSynced(2, 4096)(s) && reportsVGPUs("grid_p40-1q")(s)
	})
	if g := s.Status.Hardware.VGPUs[0]; g.Type != model.VGPUTypeNvidia || g.MigrationType != model.VGPUMigrationNone {
		t.Errorf("vGPU status %+v, want type Nvidia, migration None", g)
	}
	cfg := h.vcConfig(v)
	if got := vgpuProfiles(cfg); !slices.Equal(got, []string{"grid_p40-1q"}) {
		t.Errorf("vGPUs in vcsim %v, want [grid_p40-1q]", got)
	}
	if got, _ := extraValue(cfg, "class.key"); got != "gpu" {
		t.Errorf("extraConfig class.key = %q, want gpu", got)
	}
	if cfg.CpuHotAddEnabled == nil || !*cfg.CpuHotAddEnabled {
		t.Error("CPU hot-add is not enabled")
	}
	if rec, _ := extraValue(cfg, vcenter.KeyAppliedClass); rec != gpu.applied().String() {
		t.Errorf("class record %q, want %q", rec, gpu.applied().String())
	}

	h.waitAnnotation(v, gpu.applied())
	pendingResize(v, plain.obj.Name)
	h.putSpec(v)
	h.readyInputs(v)
	h.waitStatus(v, "off with no vGPU", func(s sliceStatus) bool {
		return synced(model.PowerStateOff)(s) && classSynced(2, 4096)(s) && reportsVGPUs()(s)
	})
	cfg = h.vcConfig(v)
	if got := vgpuProfiles(cfg); len(got) != 0 {
		t.Errorf("vGPUs in vcsim after the resize to a class without: %v", got)
	}
	if got, ok := extraValue(cfg, "class.key"); ok {
		t.Errorf("extraConfig class.key = %q is still there", got)
	}
	if cfg.CpuHotAddEnabled == nil || *cfg.CpuHotAddEnabled {
		t.Errorf("CPU hot-add %v after the resize to a class without, want false", cfg.CpuHotAddEnabled)
	}
}

// Raising spec.minHardwareVersion and setting spec.bootOptions on a running VM that is
// being powered off upgrades it (17 to 19) and gives it the boot options once it is off:
// status.hardwareVersion and vcsim agree, and the VM's boot options are the spec's.
func TestUpgradeAndBootOptionsAtPowerOff(t *testing.T) {
	h := start(t)
	h.putClass(inventory.SeedClassName, seedClassSpec())
	v := h.createVMWith("upgrade-boot", func(cs *types.VirtualMachineConfigSpec) { cs.Version, cs.Firmware = "vmx-17", "bios" })
	h.putSpec(v)
	h.readyInputs(v)
	if s := h.waitStatus(v, "on at vmx-17", synced(model.PowerStateOn)); s.Status.HardwareVersion != 17 {
		t.Fatalf("status.hardwareVersion %d, want 17", s.Status.HardwareVersion)
	}

	v.obj.Generation++
	v.obj.Spec.PowerState = model.PowerStateOff
	v.obj.Spec.MinHardwareVersion = 19
	v.obj.Spec.BootOptions = &model.VirtualMachineBootOptions{
		Firmware: model.FirmwareEFI, EFISecureBoot: model.BootOptionEnabled,
		BootDelay: &metav1.Duration{Duration: 5 * time.Second}, BootRetry: model.BootOptionEnabled,
		BootRetryDelay: &metav1.Duration{Duration: 20 * time.Second}, NetworkBootProtocol: "IP6", EnterBootSetup: model.BootOptionEnabled,
		BootOrder: []model.BootableDevice{{Type: model.BootDeviceNetwork, Name: "eth0"}, {Type: model.BootDeviceCDRom}},
	}
	h.putSpec(v)
	h.readyInputs(v)
	h.publish(v, model.ServiceNetwork, map[string]any{
		"conditions": []metav1.Condition{
			{Type: model.ConditionNetworkReady, Status: metav1.ConditionTrue, Reason: model.ReasonTrue, ObservedGeneration: v.obj.Generation, LastTransitionTime: metav1.Now().Rfc3339Copy()},
			{Type: model.ConditionBootstrapReady, Status: metav1.ConditionTrue, Reason: model.ReasonTrue, ObservedGeneration: v.obj.Generation, LastTransitionTime: metav1.Now().Rfc3339Copy()},
		},
		"network": model.VirtualMachineNetworkStatus{Interfaces: []model.VirtualMachineNetworkInterfaceStatus{{Name: "eth0", DeviceKey: 4000}}},
	})
	h.waitStatus(v, "off at vmx-19", func(s sliceStatus) bool {
		return synced(model.PowerStateOff)(s) && s.Status.HardwareVersion == 19
	})
	h.waitUntil("vcsim's VM has the boot options", func() bool {
		cfg := h.vcConfig(v)
		bo := cfg.BootOptions
		return cfg.Version == "vmx-19" && cfg.Firmware == "efi" && bo != nil && bo.EfiSecureBootEnabled != nil && *bo.EfiSecureBootEnabled &&
			bo.BootDelay == 5000 && bo.BootRetryEnabled != nil && *bo.BootRetryEnabled && bo.BootRetryDelay == 20000 &&
			bo.NetworkBootProtocol == "ipv6" && bo.EnterBIOSSetup != nil && *bo.EnterBIOSSetup && len(bo.BootOrder) == 2
	}, func() string {
		b, _ := json.Marshal(h.vcConfig(v).BootOptions)
		return h.vcConfig(v).Version + " " + string(b)
	})
	order := h.vcConfig(v).BootOptions.BootOrder
	if nic, ok := order[0].(*types.VirtualMachineBootOptionsBootableEthernetDevice); !ok || nic.DeviceKey != 4000 {
		t.Errorf("boot order[0] = %#v, want the adapter with key 4000", order[0])
	}
	if _, ok := order[1].(*types.VirtualMachineBootOptionsBootableCdromDevice); !ok {
		t.Errorf("boot order[1] = %#v, want the CD-ROM", order[1])
	}
}
