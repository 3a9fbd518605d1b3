package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/vcenter"
)

// gpuClass is a class whose ConfigSpec carries extraConfig, a vGPU profile and CPU hot-add.
const gpuClass = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachineClass
metadata:
  name: gpu-class
spec:
  hardware:
    cpus: 2
    memory: 4Gi
  configSpec:
    _typeName: VirtualMachineConfigSpec
    cpuHotAddEnabled: true
    extraConfig:
    - _typeName: OptionValue
      key: class.gpu
      value:
        _typeName: string
        _value: "yes"
    deviceChange:
    - _typeName: VirtualDeviceConfigSpec
      operation: add
      device:
        _typeName: VirtualPCIPassthrough
        key: -50
        backing:
          _typeName: VirtualPCIPassthroughVmiopBackingInfo
          vgpu: grid_p40-1q
`

// gpuVM is a powered-off VM of gpuClass from the hardware version 17 image.
const gpuVM = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata:
  name: gpu-vm
spec:
  className: gpu-class
  imageName: my-image
  storageClass: my-storage-class
  powerState: PoweredOff
  minHardwareVersion: 17
  network:
    interfaces:
    - name: eth0
`

// TestClassConfigSpecBootOptionsAndUpgrade walks issue #16 items 2-4 through the REST API
// (kubectl) and every role: a class ConfigSpec that is not one is refused; a VM of a class
// with extraConfig, a vGPU and CPU hot-add has all three in vcsim and lists the vGPU in
// status.hardware.vGPUs; resizing it while off to a class without the vGPU removes it;
// boot options with EFI secure boot and a boot order reach vcsim; raising
// minHardwareVersion from 17 to 19 upgrades the powered-off VM.
func TestClassConfigSpecBootOptionsAndUpgrade(t *testing.T) {
	tp := startTopology(t)
	vc, err := vcenter.Connect(t.Context(), tp.vcenter(t))
	if err != nil {
		t.Fatal(err)
	}
	// The hardware version 17 image is a namespace image of namespace default.
	const ns = "default"
	get := func(path string) string {
		out, _ := tp.kubectlErr("get", "vm", "gpu-vm", "-n", ns, "-o", "jsonpath="+path)
		return out
	}
	apply := func(doc string) (string, error) {
		return tp.kubectlCtx(t.Context(), []byte(doc), "apply", "-n", ns, "-f", "-")
	}

	bad := strings.Replace(strings.Replace(gpuClass, "gpu-class", "bad-class", 1), "_typeName: VirtualPCIPassthrough\n", "_typeName: VirtualDisk\n", 1)
	out, err := apply(bad)
	if err == nil || !strings.Contains(out, "spec.configSpec.deviceChange[0].device._typeName") {
		t.Errorf("a class adding a disk in its ConfigSpec: err %v, output %q; want a field error", err, out)
	}

	for _, doc := range []string{gpuClass, gpuVM} {
		if out, err := apply(doc); err != nil {
			t.Fatalf("apply: %v: %s", err, out)
		}
	}
	tp.eventually("gpu-vm PoweredOff", func() bool { return get("{.status.powerState}") == "PoweredOff" })
	tp.eventually("status.hardware.vGPUs lists the profile", func() bool {
		return get("{.status.hardware.vGPUs[*].profile}") == "grid_p40-1q"
	})
	m := configOf(t, tp, vc)
	if got := vgpus(m); got != "grid_p40-1q" {
		t.Errorf("vGPUs in vcsim %q, want grid_p40-1q", got)
	}
	if extra(m, "class.gpu") != "yes" {
		t.Error("the class's extraConfig class.gpu is not in vcsim")
	}
	if h := m.Config.CpuHotAddEnabled; h == nil || !*h {
		t.Error("CPU hot-add is not enabled in vcsim")
	}

	tp.kubectl("patch", "vm", "gpu-vm", "-n", ns, "--type", "merge", "-p", `{"spec":{"className":"my-vm-class"}}`)
	tp.eventually("resized to my-vm-class, no vGPU", func() bool {
		return get("{.status.class.name}") == "my-vm-class" && get("{.status.hardware.vGPUs}") == "" &&
			get(`{.status.conditions[?(@.type=="VirtualMachineClassConfigurationSynced")].status}`) == "True"
	})
	m = configOf(t, tp, vc)
	if got := vgpus(m); got != "" || extra(m, "class.gpu") != "" {
		t.Errorf("after the resize vcsim has vGPUs %q and class.gpu %q, want none", got, extra(m, "class.gpu"))
	}

	if v := get("{.status.hardwareVersion}"); v != "17" {
		t.Fatalf("status.hardwareVersion %q, want 17", v)
	}
	nic := get(`{.status.network.interfaces[?(@.name=="eth0")].deviceKey}`)
	tp.kubectl("patch", "vm", "gpu-vm", "-n", ns, "--type", "merge", "-p",
		`{"spec":{"minHardwareVersion":19,"bootOptions":{"firmware":"efi","efiSecureBoot":"Enabled","bootDelay":"3s","bootOrder":[{"type":"Network","name":"eth0"}]}}}`)
	tp.eventually("status.hardwareVersion 19", func() bool { return get("{.status.hardwareVersion}") == "19" })
	tp.eventually("vcsim's VM upgraded with the boot options", func() bool {
		m = configOf(t, tp, vc)
		bo := m.Config.BootOptions
		return m.Config.Version == "vmx-19" && m.Config.Firmware == "efi" && bo != nil &&
			bo.EfiSecureBootEnabled != nil && *bo.EfiSecureBootEnabled && bo.BootDelay == 3000 && len(bo.BootOrder) == 1
	})
	d, ok := m.Config.BootOptions.BootOrder[0].(*types.VirtualMachineBootOptionsBootableEthernetDevice)
	if !ok || fmt.Sprint(d.DeviceKey) != nic || object.VirtualDeviceList(m.Config.Hardware.Device).FindByKey(d.DeviceKey) == nil {
		t.Errorf("boot order %#v, want eth0's adapter (key %s)", m.Config.BootOptions.BootOrder[0], nic)
	}
}

func configOf(t *testing.T, tp *topology, vc *govmomi.Client) mo.VirtualMachine {
	t.Helper()
	var m mo.VirtualMachine
	vm, err := vcenter.FindVM(t.Context(), vc, tp.kubectl("get", "vm", "gpu-vm", "-n", "default", "-o", "jsonpath={.spec.instanceUUID}"))
	if err != nil {
		t.Fatalf("find gpu-vm in vcsim: %v", err)
	}
	if err := vm.Properties(t.Context(), vm.Reference(), []string{"config"}, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func vgpus(m mo.VirtualMachine) string {
	var out []string
	for _, d := range m.Config.Hardware.Device {
		if p, ok := d.(*types.VirtualPCIPassthrough); ok {
			if b, ok := p.Backing.(*types.VirtualPCIPassthroughVmiopBackingInfo); ok {
				out = append(out, b.Vgpu)
			}
		}
	}
	return strings.Join(out, " ")
}

func extra(m mo.VirtualMachine, key string) string {
	for _, o := range m.Config.ExtraConfig {
		if ov := o.GetOptionValue(); ov.Key == key {
			s, _ := ov.Value.(string)
			return s
		}
	}
	return ""
}
