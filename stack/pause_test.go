package main

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/vcenter"
)

// pausedWindow is how long a paused VM is watched for any service acting on it (issue
// #15's acceptance).
const pausedWindow = 20 * time.Second

// TestPausedVMIsLeftAlone walks issue #15's pause through every role: a powered-on VM is
// paused with the annotation; its powerState and class are changed; for 20s no service
// starts a vCenter task on it and ReconcileReady says DevOps paused it; removing the
// annotation powers it off and resizes it, each once.
func TestPausedVMIsLeftAlone(t *testing.T) {
	tp := startTopology(t)
	vc, err := vcenter.Connect(t.Context(), tp.vcenter(t))
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) string {
		return tp.kubectl("get", "vm", "paused-vm", "-n", "my-namespace", "-o", "jsonpath="+path)
	}
	reconcileReady := func(field string) string {
		return get(`{.status.conditions[?(@.type=="VirtualMachineReconcileReady")].` + field + `}`)
	}

	tp.apply(vmNamed("paused-vm", ""), "")
	tp.waitPower("paused-vm", "PoweredOn")
	tp.eventually("ReconcileReady True", func() bool { return reconcileReady("status") == "True" })

	tp.kubectl("annotate", "vm", "paused-vm", "-n", "my-namespace", "vmoperator.vmware.com/paused=true")
	tp.eventually("ReconcileReady says DevOps paused the VM", func() bool {
		return reconcileReady("status") == "False" &&
			reconcileReady("reason") == "VirtualMachineReconcilePaused" &&
			reconcileReady("message") == "Virtual Machine reconciliation paused by DevOps"
	})
	vm := tp.vm(vc, "paused-vm")
	before := vmTasks(t, vc, vm.Reference())

	tp.kubectl("patch", "vm", "paused-vm", "-n", "my-namespace", "--type", "merge", "-p",
		`{"spec":{"powerState":"PoweredOff","className":"best-effort-large"}}`)
	window := time.After(pausedWindow)
	for watching := true; watching; {
		select {
		case <-window:
			watching = false
		case <-time.After(500 * time.Millisecond): // how often the window is sampled
		}
		m := tp.inVCenter(vc, "paused-vm")
		if hw := m.Config.Hardware; m.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn || hw.NumCPU != 2 || hw.MemoryMB != 4096 {
			t.Fatalf("paused VM acted on: %s, %d CPUs, %d MB in vcsim", m.Runtime.PowerState, hw.NumCPU, hw.MemoryMB)
		}
		if now := vmTasks(t, vc, vm.Reference()); !maps.Equal(now, before) {
			t.Fatalf("vCenter tasks on the paused VM: %v, before pausing %v", now, before)
		}
	}
	if s := get("{.status.powerState}"); s != "PoweredOn" {
		t.Errorf("status.powerState of the paused VM %q, want PoweredOn still", s)
	}

	tp.kubectl("annotate", "vm", "paused-vm", "-n", "my-namespace", "vmoperator.vmware.com/paused-")
	tp.eventually("unpaused VM off with the new class", func() bool {
		return get("{.status.powerState} {.status.class.name} {.status.hardware.cpu.total} {.status.hardware.memory.total}") ==
			"PoweredOff best-effort-large 4 16Gi" && reconcileReady("status") == "True"
	})
	m := tp.inVCenter(vc, "paused-vm")
	if hw := m.Config.Hardware; m.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOff || hw.NumCPU != 4 || hw.MemoryMB != 16384 {
		t.Errorf("in vcsim after unpausing: %s, %d CPUs, %d MB; want poweredOff, 4, 16384", m.Runtime.PowerState, hw.NumCPU, hw.MemoryMB)
	}
	after := vmTasks(t, vc, vm.Reference())
	for _, id := range []string{"VirtualMachine.powerOff", "VirtualMachine.reconfigVm"} {
		if n := after[id] - before[id]; n != 1 {
			t.Errorf("%d %s tasks after unpausing, want 1 (tasks %v, before %v)", n, id, after, before)
		}
	}
}

// vmTasks counts the VM's recent vCenter tasks (vCenter keeps 200 per entity) by
// descriptionId, e.g. "VirtualMachine.powerOff", "VirtualMachine.reconfigVm".
func vmTasks(t *testing.T, vc *govmomi.Client, ref types.ManagedObjectReference) map[string]int {
	t.Helper()
	pc := property.DefaultCollector(vc.Client)
	var m mo.VirtualMachine
	if err := pc.RetrieveOne(t.Context(), ref, []string{"recentTask"}, &m); err != nil {
		t.Fatal(err)
	}
	var tasks []mo.Task
	if len(m.RecentTask) > 0 {
		if err := pc.Retrieve(t.Context(), m.RecentTask, []string{"info"}, &tasks); err != nil {
			t.Fatal(err)
		}
	}
	n := map[string]int{}
	for _, task := range tasks {
		n[task.Info.DescriptionId]++
	}
	return n
}

// TestAdminPausedVM: a vSphere admin pauses a VM with ExtraConfig
// vmservice.virtualmachine.pause=true; at the next change of the object (or power's
// resync) kubectl shows the paused label "admin" and ReconcileReady saying an admin paused
// it; lifting it in vSphere takes the label away and ReconcileReady is True again.
func TestAdminPausedVM(t *testing.T) {
	tp := startTopology(t)
	vc, err := vcenter.Connect(t.Context(), tp.vcenter(t))
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) string {
		return tp.kubectl("get", "vm", "admin-paused-vm", "-n", "my-namespace", "-o", "jsonpath="+path)
	}
	pausedLabel := func() string { return get(`{.metadata.labels.vmoperator\.vmware\.com/paused}`) }
	reconcileReady := func() string {
		return get(`{.status.conditions[?(@.type=="VirtualMachineReconcileReady")].status} {.status.conditions[?(@.type=="VirtualMachineReconcileReady")].message}`)
	}
	tp.apply(vmNamed("admin-paused-vm", ""), "")
	tp.waitPower("admin-paused-vm", "PoweredOn")
	vm := tp.vm(vc, "admin-paused-vm")
	adminPause := func(value string) {
		task, err := vm.Reconfigure(t.Context(), types.VirtualMachineConfigSpec{ExtraConfig: []types.BaseOptionValue{
			&types.OptionValue{Key: vcenter.KeyAdminPause, Value: value},
		}})
		if err == nil {
			err = task.Wait(t.Context())
		}
		if err != nil {
			t.Fatalf("set %s=%q in vSphere: %v", vcenter.KeyAdminPause, value, err)
		}
	}

	adminPause("true")
	tp.kubectl("annotate", "vm", "admin-paused-vm", "-n", "my-namespace", "note=paused in vSphere")
	tp.eventually("label and ReconcileReady say an admin paused the VM", func() bool {
		return pausedLabel() == "admin" && reconcileReady() == "False Virtual Machine reconciliation paused by Admin"
	})

	adminPause("")
	tp.kubectl("annotate", "--overwrite", "vm", "admin-paused-vm", "-n", "my-namespace", "note=lifted in vSphere")
	tp.eventually("no paused label, ReconcileReady True", func() bool {
		return pausedLabel() == "" && strings.HasPrefix(reconcileReady(), "True")
	})
}
