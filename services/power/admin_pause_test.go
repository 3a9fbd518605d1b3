package power_test

import (
	"encoding/json"
	"testing"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// An admin's pause in vSphere (ExtraConfig vmservice.virtualmachine.pause=true) pauses
// the VM at power's next look: the paused label says "admin" (then "both" with DevOps'
// annotation, "devops" once the admin lifts it), nothing is acted on meanwhile, and once
// nobody pauses it the label goes and the change that waited is made, once.
func TestAdminPauseInVSphere(t *testing.T) {
	h := start(t)
	calls := h.watchCalls()
	v := h.powered("admin-paused")

	h.setExtraConfig(v, vcenter.KeyAdminPause, "true")
	h.change(v, func(vm *model.VirtualMachine) { vm.Spec.PowerState = model.PowerStateOff })
	h.waitLabel(v, model.PausedByAdmin)
	h.waitHandled(v)
	if n := calls.count(v, callPowerOff); n != 0 || h.vcPower(v) != types.VirtualMachinePowerStatePoweredOn {
		t.Fatalf("VM paused by an admin acted on: %d power-offs, %s in vcsim", n, h.vcPower(v))
	}

	h.edit(v, func(vm *model.VirtualMachine) { vm.Annotations[model.AnnotationPaused] = "" })
	h.waitLabel(v, model.PausedByBoth)

	h.setExtraConfig(v, vcenter.KeyAdminPause, "")
	h.edit(v, func(vm *model.VirtualMachine) { vm.Annotations["note"] = "the admin lifted the pause" }) // power looks again
	h.waitLabel(v, model.PausedByDevOps)
	h.waitHandled(v)
	if n := calls.count(v, callPowerOff); n != 0 {
		t.Fatalf("VM paused by DevOps acted on: %d power-offs", n)
	}

	h.edit(v, func(vm *model.VirtualMachine) { delete(vm.Annotations, model.AnnotationPaused) })
	h.waitStatus(v, "off once nobody pauses it", synced(model.PowerStateOff))
	h.waitLabel(v, "")
	if n := calls.count(v, callPowerOff); n != 1 {
		t.Errorf("%d power-offs, want one", n)
	}
}

// setExtraConfig sets key in v's ExtraConfig in vCenter, as an admin would ("" removes it).
func (h *harness) setExtraConfig(v *testVM, key, value string) {
	h.t.Helper()
	task, err := v.vm.Reconfigure(h.ctx, types.VirtualMachineConfigSpec{ExtraConfig: []types.BaseOptionValue{
		&types.OptionValue{Key: key, Value: value},
	}})
	if err == nil {
		err = task.Wait(h.ctx)
	}
	if err != nil {
		h.t.Fatalf("set %s: %v", key, err)
	}
}

// edit changes v's metadata on the newest record (power may have written one), keeping
// its generation.
func (h *harness) edit(v *testVM, change func(*model.VirtualMachine)) {
	h.t.Helper()
	rec := h.lastSpec(v)
	if err := json.Unmarshal(rec.Body, &v.obj); err != nil {
		h.t.Fatal(err)
	}
	if v.obj.Annotations == nil {
		v.obj.Annotations = map[string]string{}
	}
	v.specSeq = rec.Seq
	change(&v.obj)
	h.putSpec(v)
}

func (h *harness) lastSpec(v *testVM) events.SpecRecord {
	h.t.Helper()
	rec, err := events.LastSpec(h.ctx, h.js, v.ref)
	if err != nil {
		h.t.Fatal(err)
	}
	return rec
}

// waitLabel waits until v's newest record carries the paused label want ("": none).
func (h *harness) waitLabel(v *testVM, want string) {
	h.t.Helper()
	label := func() string {
		var vm model.VirtualMachine
		if err := json.Unmarshal(h.lastSpec(v).Body, &vm); err != nil {
			h.t.Fatal(err)
		}
		l, ok := vm.Labels[model.LabelPaused]
		if !ok {
			return "(none)"
		}
		return l
	}
	if want == "" {
		want = "(none)"
	}
	h.waitUntil("paused label "+want, func() bool { return label() == want }, label)
}

// waitHandled waits until power's consumer of VirtualMachine records acknowledged v's
// newest: its reconcile ran to the end, whatever it did.
func (h *harness) waitHandled(v *testVM) {
	h.t.Helper()
	h.waitConsumed(events.StreamSpecs, events.Durable(model.ServicePower), h.lastSpec(v).Seq)
}
