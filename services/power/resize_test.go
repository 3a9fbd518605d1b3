package power_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// seedClassSpec is the seed document's class, which the harness's VMs are made of: 2 CPUs,
// 4 GiB, 200 MHz and 1024 MB reserved.
func seedClassSpec() model.VirtualMachineClassSpec {
	spec := hardwareClass(2, "4Gi", nil)
	spec.ConfigSpec = json.RawMessage(`{"_typeName":"VirtualMachineConfigSpec",` +
		`"cpuAllocation":{"_typeName":"ResourceAllocationInfo","limit":400,"reservation":200},` +
		`"memoryAllocation":{"_typeName":"ResourceAllocationInfo","limit":2048,"reservation":1024}}`)
	return spec
}

// pendingResize changes v's class the way the gateway records it: a new generation and,
// by D14, the annotation naming the class the VM had.
func pendingResize(v *testVM, class string) {
	if _, ok := v.obj.Annotations[model.AnnotationLastResizedClass]; !ok {
		if v.obj.Annotations == nil {
			v.obj.Annotations = map[string]string{}
		}
		v.obj.Annotations[model.AnnotationLastResizedClass] = model.AppliedClass{Name: v.obj.Spec.ClassName}.String()
	}
	v.obj.Spec.ClassName = class
	v.obj.Generation++
}

func allocation(reservation, limit int64) *types.ResourceAllocationInfo {
	return &types.ResourceAllocationInfo{Reservation: &reservation, Limit: &limit}
}

// checkAllocations compares the VM's reservations and limits with the wanted ones.
func checkAllocations(t *testing.T, cfg types.VirtualMachineConfigInfo, cpu, mem *types.ResourceAllocationInfo) {
	t.Helper()
	show := func(a *types.ResourceAllocationInfo) string {
		if a == nil || a.Reservation == nil || a.Limit == nil {
			return fmt.Sprintf("%+v", a)
		}
		return fmt.Sprintf("reservation %d, limit %d", *a.Reservation, *a.Limit)
	}
	if got, want := show(cfg.CpuAllocation), show(cpu); got != want {
		t.Errorf("CPU allocation: %s, want %s", got, want)
	}
	if got, want := show(cfg.MemoryAllocation), show(mem); got != want {
		t.Errorf("memory allocation: %s, want %s", got, want)
	}
}

// A powered-off VM whose class changes gets the new class's CPU, memory, reservations and
// limits at once; the VM records the class and the annotation follows. A class change
// together with a power-on resizes before the power-on.
func TestResizeOfAPoweredOffVM(t *testing.T) {
	h := start(t)
	h.putClass(inventory.SeedClassName, seedClassSpec())
	big := h.putClass("big", hardwareClass(4, "8Gi", &model.VirtualMachineClassPolicies{Resources: &model.VirtualMachineClassResources{
		Requests: &model.VirtualMachineResourceSpec{Cpu: quantity("1"), Memory: quantity("2Gi")},
		Limits:   &model.VirtualMachineResourceSpec{Cpu: quantity("2"), Memory: quantity("8Gi")},
	}}))
	small := h.putClass("small", hardwareClass(1, "2Gi", nil))

	v := h.createVM("resized-off") // a VM from before vmop recorded classes in VMs
	v.obj.Spec.PowerState = model.PowerStateOff
	h.putSpec(v)
	h.readyInputs(v)
	h.waitStatus(v, "off, in line with its class", func(s sliceStatus) bool {
		return synced(model.PowerStateOff)(s) && classSynced(2, 4096)(s)
	})

	pendingResize(v, big.obj.Name)
	h.putSpec(v)
	got := h.waitStatus(v, "resized to big", classSynced(4, 8192))
	mhz := h.vcHostMHz(v)
	cfg := h.vcConfig(v)
	if cfg.Hardware.NumCPU != 4 || cfg.Hardware.MemoryMB != 8192 {
		t.Errorf("vCenter: %d CPUs, %d MB, want 4 and 8192", cfg.Hardware.NumCPU, cfg.Hardware.MemoryMB)
	}
	checkAllocations(t, cfg, allocation(mhz, 2*mhz), allocation(2048, 8192)) // policies: cores at the host's clock
	if hw := got.Status.Hardware; hw.CPU.Reservation != mhz || hw.Memory.Reservation.Value() != 2<<30 {
		t.Errorf("status reservations: CPU %d MHz, memory %s, want %d MHz and 2Gi", hw.CPU.Reservation, hw.Memory.Reservation, mhz)
	}
	if rec := h.vcRecord(v); rec != big.applied().String() {
		t.Errorf("the VM records class %s, want %s", rec, big.applied())
	}
	if s := h.vcPower(v); s != types.VirtualMachinePowerStatePoweredOff {
		t.Errorf("VM is %s after the resize, want poweredOff", s)
	}
	h.waitAnnotation(v, big.applied())

	// Off to on in one change: a class without reservations or limits, and PoweredOn.
	pendingResize(v, small.obj.Name)
	v.obj.Spec.PowerState = model.PowerStateOn
	h.putSpec(v)
	h.readyInputs(v)
	h.waitStatus(v, "on with the small class", func(s sliceStatus) bool {
		return synced(model.PowerStateOn)(s) && classSynced(1, 2048)(s)
	})
	cfg = h.vcConfig(v)
	if cfg.Hardware.NumCPU != 1 || cfg.Hardware.MemoryMB != 2048 {
		t.Errorf("vCenter: %d CPUs, %d MB, want 1 and 2048", cfg.Hardware.NumCPU, cfg.Hardware.MemoryMB)
	}
	checkAllocations(t, cfg, allocation(0, -1), allocation(0, -1)) // the previous class's are gone
	evs := slices.DeleteFunc(h.vcEvents(v), func(e string) bool { return e == "other" })
	if n := len(evs); n < 2 || evs[n-2] != "VmReconfiguredEvent" || evs[n-1] != "VmPoweredOnEvent" {
		t.Errorf("vCenter events %v, want the resize right before the power-on", evs)
	}
	h.waitAnnotation(v, small.applied())
}

// A running VM is not resized: the condition says it waits for a power-off, and the next
// power-off and power-on give it the new class.
func TestResizeWaitsForPowerOff(t *testing.T) {
	h := start(t)
	seed := h.putClass(inventory.SeedClassName, seedClassSpec())
	big := h.putClass("big", hardwareClass(4, "8Gi", nil))
	v := h.createVM("resized-later")
	h.recordClass(v, seed) // as placement creates it
	h.putSpec(v)
	h.readyInputs(v)
	h.waitStatus(v, "running, in line with its class", func(s sliceStatus) bool {
		return synced(model.PowerStateOn)(s) && classSynced(2, 4096)(s)
	})

	pendingResize(v, big.obj.Name)
	h.putSpec(v)
	h.readyInputs(v)
	h.waitStatus(v, "waiting for a power-off", classPending(model.ReasonClassNameChanged,
		"the resize to class big waits for the VM to be powered off"))
	if cfg := h.vcConfig(v); cfg.Hardware.NumCPU != 2 || cfg.Hardware.MemoryMB != 4096 {
		t.Errorf("running VM changed to %d CPUs, %d MB, want it left at 2 and 4096", cfg.Hardware.NumCPU, cfg.Hardware.MemoryMB)
	}
	if s := h.vcPower(v); s != types.VirtualMachinePowerStatePoweredOn {
		t.Errorf("VM is %s while the resize waits, want poweredOn", s)
	}
	if rec := h.vcRecord(v); rec != seed.applied().String() {
		t.Errorf("the VM records class %s, want still %s", rec, seed.applied())
	}

	v.obj.Spec.PowerState = model.PowerStateOff
	v.obj.Generation++
	h.putSpec(v)
	h.waitStatus(v, "off", synced(model.PowerStateOff))
	h.waitAnnotation(v, big.applied()) // once the resize is done; then the spec can change again
	v.obj.Spec.PowerState = model.PowerStateOn
	v.obj.Generation++
	h.putSpec(v)
	h.readyInputs(v)
	h.waitStatus(v, "on with the big class", func(s sliceStatus) bool {
		return synced(model.PowerStateOn)(s) && classSynced(4, 8192)(s)
	})
	cfg := h.vcConfig(v)
	if cfg.Hardware.NumCPU != 4 || cfg.Hardware.MemoryMB != 8192 {
		t.Errorf("vCenter: %d CPUs, %d MB, want 4 and 8192", cfg.Hardware.NumCPU, cfg.Hardware.MemoryMB)
	}
	checkAllocations(t, cfg, allocation(0, -1), allocation(0, -1))
	if rec := h.vcRecord(v); rec != big.applied().String() {
		t.Errorf("the VM records class %s, want %s", rec, big.applied())
	}
}

// With same-vm-class-resize, a change of the class object resizes the VM again; a VM of
// the same class without the annotation keeps its configuration and says the class
// changed.
func TestSameClassResize(t *testing.T) {
	h := start(t)
	cls := h.putClass("elastic", hardwareClass(2, "4Gi", nil))
	follows, stays := h.createVM("follows"), h.createVM("stays")
	for _, v := range []*testVM{follows, stays} {
		h.recordClass(v, cls)
		v.obj.Spec.ClassName, v.obj.Spec.PowerState = cls.obj.Name, model.PowerStateOff
	}
	follows.obj.Annotations = map[string]string{model.AnnotationSameClassResize: ""}
	for _, v := range []*testVM{follows, stays} {
		h.putSpec(v)
		h.readyInputs(v)
		h.waitStatus(v, "off, in line with its class", func(s sliceStatus) bool {
			return synced(model.PowerStateOff)(s) && classSynced(2, 4096)(s)
		})
	}
	h.waitAnnotation(follows, cls.applied()) // a VM following its class shows the version it has

	h.updateClass(cls, hardwareClass(4, "8Gi", nil))
	h.waitStatus(follows, "resized with its class", classSynced(4, 8192))
	if cfg := h.vcConfig(follows); cfg.Hardware.NumCPU != 4 || cfg.Hardware.MemoryMB != 8192 {
		t.Errorf("vCenter: %d CPUs, %d MB, want 4 and 8192", cfg.Hardware.NumCPU, cfg.Hardware.MemoryMB)
	}
	if rec := h.vcRecord(follows); rec != cls.applied().String() {
		t.Errorf("the VM records class %s, want %s", rec, cls.applied())
	}
	h.waitAnnotation(follows, cls.applied())

	h.waitStatus(stays, "told the class changed", classPending(model.ReasonClassUpdated,
		"VirtualMachineClass elastic changed since the VM got it; annotation "+model.AnnotationSameClassResize+" resizes the VM to it"))
	if cfg := h.vcConfig(stays); cfg.Hardware.NumCPU != 2 || cfg.Hardware.MemoryMB != 4096 {
		t.Errorf("VM without %s resized to %d CPUs, %d MB, want it left at 2 and 4096", model.AnnotationSameClassResize, cfg.Hardware.NumCPU, cfg.Hardware.MemoryMB)
	}

	// A running VM following its class waits for a power-off too.
	follows.obj.Spec.PowerState = model.PowerStateOn
	follows.obj.Generation++
	h.putSpec(follows)
	h.readyInputs(follows)
	h.waitStatus(follows, "on", synced(model.PowerStateOn))
	h.updateClass(cls, hardwareClass(8, "8Gi", nil))
	h.waitStatus(follows, "waiting for a power-off", classPending(model.ReasonSameClassResize,
		"the resize to class elastic waits for the VM to be powered off"))
	if cfg := h.vcConfig(follows); cfg.Hardware.NumCPU != 4 {
		t.Errorf("running VM changed to %d CPUs, want it left at 4", cfg.Hardware.NumCPU)
	}
}

// A class that does not exist resizes nothing; a VM whose spec names it waits for it
// before it is powered on.
func TestResizeToAMissingClass(t *testing.T) {
	h := start(t)
	h.putClass(inventory.SeedClassName, seedClassSpec())
	v := h.createVM("missing-class")
	v.obj.Spec.PowerState = model.PowerStateOff
	h.putSpec(v)
	h.readyInputs(v)
	h.waitStatus(v, "off, in line with its class", classSynced(2, 4096))

	pendingResize(v, "nowhere")
	v.obj.Spec.PowerState = model.PowerStateOn
	h.putSpec(v)
	h.readyInputs(v)
	const missing = "VirtualMachineClass nowhere not found in namespace " + namespace
	got := h.waitStatus(v, "class not found", func(s sliceStatus) bool {
		c := classCondition(s)
		return c.Status == metav1.ConditionUnknown && c.Reason == model.ReasonClassNotFound && c.Message == missing &&
			notSynced(model.ReasonNotSynced, "waiting for the resize to class nowhere ("+missing+")")(s)
	})
	if s := h.vcPower(v); s != types.VirtualMachinePowerStatePoweredOff {
		t.Errorf("VM is %s, want it kept off until its class exists", s)
	}
	if got.Status.Hardware.CPU.Total != 2 {
		t.Errorf("%d CPUs, want 2", got.Status.Hardware.CPU.Total)
	}

	nowhere := h.putClass("nowhere", hardwareClass(3, "3Gi", nil)) // a related object: the VM goes on
	h.waitStatus(v, "resized and on", func(s sliceStatus) bool {
		return synced(model.PowerStateOn)(s) && classSynced(3, 3072)(s)
	})
	h.waitAnnotation(v, nowhere.applied())
}

// A resize whose task completed before the service could report it (a crash, or the same
// change delivered twice) is not made again: the VM's record says it has the class.
func TestResizeIsNotRepeated(t *testing.T) {
	h := start(t)
	h.putClass(inventory.SeedClassName, seedClassSpec())
	big := h.putClass("big", hardwareClass(4, "8Gi", nil))
	v := h.createVM("resized-before-crash")
	task, err := v.vm.Reconfigure(h.ctx, resizeSpecOf(big))
	if err == nil {
		err = task.Wait(h.ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	reconfigured := func() int {
		return len(slices.DeleteFunc(h.vcEvents(v), func(e string) bool { return e != "VmReconfiguredEvent" }))
	}
	before := reconfigured()

	v.obj.Spec.PowerState = model.PowerStateOff
	pendingResize(v, big.obj.Name)
	pending := v.obj.Annotations[model.AnnotationLastResizedClass]
	for range 2 { // the change, and the same change again
		v.obj.Annotations[model.AnnotationLastResizedClass] = pending
		h.putSpec(v)
		h.readyInputs(v)
		h.waitStatus(v, "in line with big", classSynced(4, 8192))
		h.waitAnnotation(v, big.applied())
	}
	if n := reconfigured(); n != before {
		t.Errorf("%d reconfigurations after the resize had been made, want none", n-before)
	}
}

// resizeSpecOf is what a resize to c (a class without reservations or limits) does.
func resizeSpecOf(c *testClass) types.VirtualMachineConfigSpec {
	return types.VirtualMachineConfigSpec{
		NumCPUs: int32(c.obj.Spec.Hardware.Cpus), MemoryMB: vcenter.Mebibytes(*c.obj.Spec.Hardware.Memory),
		CpuAllocation: allocation(0, -1), MemoryAllocation: allocation(0, -1),
		ExtraConfig: []types.BaseOptionValue{vcenter.AppliedClassOption(c.applied())},
	}
}
