package power_test

import (
	"encoding/json"
	"slices"

	"github.com/google/uuid"
	"github.com/vmware/govmomi/event"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apitypes "k8s.io/apimachinery/pkg/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// testClass is a VirtualMachineClass object as the gateway stores it.
type testClass struct {
	ref events.Ref
	obj model.VirtualMachineClass
	seq uint64
}

// putClass stores a new class, generation 1.
func (h *harness) putClass(name string, spec model.VirtualMachineClassSpec) *testClass {
	h.t.Helper()
	c := &testClass{ref: events.Ref{Plural: "virtualmachineclasses", Namespace: namespace, Name: name}}
	c.obj.APIVersion, c.obj.Kind = "vmoperator.vmware.com/v1alpha5", "VirtualMachineClass"
	c.obj.Name, c.obj.Namespace = name, namespace
	c.obj.UID, c.obj.Generation = apitypes.UID(uuid.NewString()), 1
	c.obj.Spec = spec
	h.storeClass(c)
	return c
}

// updateClass changes the class's spec: a new generation.
func (h *harness) updateClass(c *testClass, spec model.VirtualMachineClassSpec) {
	h.t.Helper()
	c.obj.Spec = spec
	c.obj.Generation++
	h.storeClass(c)
}

func (h *harness) storeClass(c *testClass) {
	h.t.Helper()
	body, err := json.Marshal(c.obj)
	if err != nil {
		h.t.Fatal(err)
	}
	if c.seq, err = events.AppendSpec(h.ctx, h.js, c.ref, events.OpPut, body, c.seq, nil); err != nil {
		h.t.Fatal(err)
	}
}

// applied is the class as a VM records having it.
func (c *testClass) applied() model.AppliedClass {
	return model.AppliedClass{Name: c.obj.Name, UID: string(c.obj.UID), Generation: c.obj.Generation}
}

// hardwareClass is a class of cpus and memory from spec.hardware, with the given
// policies.
func hardwareClass(cpus int64, memory string, policies *model.VirtualMachineClassPolicies) model.VirtualMachineClassSpec {
	return model.VirtualMachineClassSpec{
		Hardware: &model.VirtualMachineClassHardware{Cpus: cpus, Memory: quantity(memory)},
		Policies: policies,
	}
}

// recordClass gives the VM the record placement writes at create: it has c.
func (h *harness) recordClass(v *testVM, c *testClass) {
	h.t.Helper()
	task, err := v.vm.Reconfigure(h.ctx, types.VirtualMachineConfigSpec{
		ExtraConfig: []types.BaseOptionValue{vcenter.AppliedClassOption(c.applied())},
	})
	if err == nil {
		err = task.Wait(h.ctx)
	}
	if err != nil {
		h.t.Fatal(err)
	}
}

// vcConfig is the VM's configuration in vCenter.
func (h *harness) vcConfig(v *testVM) types.VirtualMachineConfigInfo {
	h.t.Helper()
	var o mo.VirtualMachine
	if err := v.vm.Properties(h.ctx, v.vm.Reference(), []string{"config"}, &o); err != nil {
		h.t.Fatal(err)
	}
	return *o.Config
}

// vcRecord is the class the VM records having, "" without a record.
func (h *harness) vcRecord(v *testVM) string {
	h.t.Helper()
	for _, opt := range h.vcConfig(v).ExtraConfig {
		if o := opt.GetOptionValue(); o.Key == vcenter.KeyAppliedClass {
			s, _ := o.Value.(string)
			return s
		}
	}
	return ""
}

// vcHostMHz is the clock of the VM's host.
func (h *harness) vcHostMHz(v *testVM) int64 {
	h.t.Helper()
	var o mo.VirtualMachine
	if err := v.vm.Properties(h.ctx, v.vm.Reference(), []string{"runtime.host"}, &o); err != nil {
		h.t.Fatal(err)
	}
	var host mo.HostSystem
	if err := v.vm.Properties(h.ctx, *o.Runtime.Host, []string{"summary.hardware.cpuMhz"}, &host); err != nil {
		h.t.Fatal(err)
	}
	return int64(host.Summary.Hardware.CpuMhz)
}

// vcEvents are the types of the VM's vCenter events, oldest first.
func (h *harness) vcEvents(v *testVM) []string {
	h.t.Helper()
	evs, err := event.NewManager(h.vc.Client).QueryEvents(h.ctx, types.EventFilterSpec{
		Entity: &types.EventFilterSpecByEntity{Entity: v.vm.Reference(), Recursion: types.EventFilterSpecRecursionOptionSelf},
	})
	if err != nil {
		h.t.Fatal(err)
	}
	slices.SortFunc(evs, func(a, b types.BaseEvent) int { return int(a.GetEvent().Key - b.GetEvent().Key) })
	var names []string
	for _, e := range evs {
		names = append(names, typeName(e))
	}
	return names
}

func typeName(e types.BaseEvent) string {
	switch e.(type) {
	case *types.VmReconfiguredEvent:
		return "VmReconfiguredEvent"
	case *types.VmPoweredOnEvent:
		return "VmPoweredOnEvent"
	case *types.VmPoweredOffEvent:
		return "VmPoweredOffEvent"
	}
	return "other"
}

// refreshSpec reads the object as SPECS holds it now: power writes its annotations.
func (h *harness) refreshSpec(v *testVM) {
	h.t.Helper()
	rec, err := events.LastSpec(h.ctx, h.js, v.ref)
	if err != nil {
		h.t.Fatal(err)
	}
	v.specSeq = rec.Seq
	v.obj = model.VirtualMachine{}
	if err := json.Unmarshal(rec.Body, &v.obj); err != nil {
		h.t.Fatal(err)
	}
}

// waitAnnotation waits until the object's last-resized-vm-class annotation is want.
func (h *harness) waitAnnotation(v *testVM, want model.AppliedClass) {
	h.t.Helper()
	got := "none"
	h.waitUntil("annotation "+model.AnnotationLastResizedClass+" "+want.String(), func() bool {
		rec, err := events.LastSpec(h.ctx, h.js, v.ref)
		if err != nil {
			return false
		}
		var obj model.VirtualMachine
		if json.Unmarshal(rec.Body, &obj) != nil {
			return false
		}
		got = obj.Annotations[model.AnnotationLastResizedClass]
		return got == want.String()
	}, func() string { return got })
	h.refreshSpec(v)
}

// classCondition is the VirtualMachineClassConfigurationSynced condition of s, or a zero one.
func classCondition(s sliceStatus) metav1.Condition {
	for _, c := range s.Status.Conditions {
		if c.Type == model.ConditionClassConfigurationSynced {
			return c
		}
	}
	return metav1.Condition{}
}

// classSynced: the condition is True and power reports cpus and memoryMB.
func classSynced(cpus int32, memoryMB int64) func(sliceStatus) bool {
	return func(s sliceStatus) bool {
		c, hw := classCondition(s), s.Status.Hardware
		return c.Status == metav1.ConditionTrue && hw != nil && hw.CPU != nil && hw.Memory != nil &&
			hw.CPU.Total == cpus && hw.Memory.Total.Value() == memoryMB<<20
	}
}

// classPending: the condition is False with reason and message.
func classPending(reason, message string) func(sliceStatus) bool {
	return func(s sliceStatus) bool {
		c := classCondition(s)
		return c.Status == metav1.ConditionFalse && c.Reason == reason && c.Message == message
	}
}
