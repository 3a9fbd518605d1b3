package main

import (
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/vcenter"
)

// TestResizeByClass walks issue #4's resize through every role: kubectl changes the class
// of a powered-off VM; the gateway marks the resize pending (D14), power resizes the VM in
// vCenter and records the class, placement reports it as status.class, power the new CPU
// and memory; the next power-on keeps them.
func TestResizeByClass(t *testing.T) {
	tp := startTopology(t)
	vc, err := vcenter.Connect(t.Context(), tp.vcenter(t))
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) string {
		return tp.kubectl("get", "vm", "resized-vm", "-n", "my-namespace", "-o", "jsonpath="+path)
	}

	tp.apply(strings.Replace(vmNamed("resized-vm", ""), "spec:\n", "spec:\n  powerState: PoweredOff\n", 1), "")
	tp.waitPower("resized-vm", "PoweredOff")
	if hw := tp.inVCenter(vc, "resized-vm").Config.Hardware; hw.NumCPU != 2 || hw.MemoryMB != 4096 {
		t.Fatalf("created with %d CPUs, %d MB, want my-vm-class's 2 and 4096", hw.NumCPU, hw.MemoryMB)
	}

	tp.kubectl("patch", "vm", "resized-vm", "-n", "my-namespace", "--type", "merge", "-p", `{"spec":{"className":"best-effort-large"}}`)
	tp.eventually("status shows the new class and its CPU and memory", func() bool {
		return get("{.status.class.name} {.status.hardware.cpu.total} {.status.hardware.memory.total}") == "best-effort-large 4 16Gi" &&
			get(`{.status.conditions[?(@.type=="VirtualMachineClassConfigurationSynced")].status}`) == "True"
	})
	if hw := tp.inVCenter(vc, "resized-vm").Config.Hardware; hw.NumCPU != 4 || hw.MemoryMB != 16384 {
		t.Errorf("in vcsim: %d CPUs, %d MB, want 4 and 16384", hw.NumCPU, hw.MemoryMB)
	}
	if a := get(`{.metadata.annotations.vmoperator\.vmware\.com/last-resized-vm-class}`); !strings.Contains(a, `"name":"best-effort-large"`) {
		t.Errorf("last-resized-vm-class annotation %q, want it to name best-effort-large", a)
	}

	tp.kubectl("patch", "vm", "resized-vm", "-n", "my-namespace", "--type", "merge", "-p", `{"spec":{"powerState":"PoweredOn"}}`)
	tp.waitPower("resized-vm", "PoweredOn")
	m := tp.inVCenter(vc, "resized-vm")
	if m.Config.Hardware.NumCPU != 4 || m.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn {
		t.Errorf("in vcsim: %d CPUs, %s, want 4, poweredOn", m.Config.Hardware.NumCPU, m.Runtime.PowerState)
	}
}
