package power_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
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
	h.edit(v, func(vm *model.VirtualMachine) {
		vm.Spec.PowerState, vm.Generation = model.PowerStateOff, vm.Generation+1
	})
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

// edit changes v on its newest record, which power may write too (the paused label):
// a write that meets one of power's is made again on the newer record.
func (h *harness) edit(v *testVM, change func(*model.VirtualMachine)) {
	h.t.Helper()
	for {
		rec := h.lastSpec(v)
		v.obj = model.VirtualMachine{}
		if err := json.Unmarshal(rec.Body, &v.obj); err != nil {
			h.t.Fatal(err)
		}
		if v.obj.Annotations == nil {
			v.obj.Annotations = map[string]string{}
		}
		change(&v.obj)
		body, err := json.Marshal(v.obj)
		if err != nil {
			h.t.Fatal(err)
		}
		seq, err := events.AppendSpec(h.ctx, h.js, v.ref, events.OpPut, body, rec.Seq, nil)
		if errors.Is(err, events.ErrConflict) {
			continue
		}
		if err != nil {
			h.t.Fatal(err)
		}
		v.specSeq = seq
		return
	}
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

// A deletion waits for an admin's pause, even one power has not seen before the deletion:
// the label says "admin" while the VM is being deleted, and power releases the VM only
// once the admin lifts the pause.
func TestAdminPauseHoldsTheDeletion(t *testing.T) {
	h := start(t)
	v := h.powered("admin-paused-deleted")
	h.setExtraConfig(v, vcenter.KeyAdminPause, "true")
	h.edit(v, func(vm *model.VirtualMachine) { now := metav1.Now(); vm.DeletionTimestamp = &now })
	h.waitLabel(v, model.PausedByAdmin)
	h.waitHandled(v)
	if h.powerReleased(v) {
		t.Fatal("power released a VM an admin paused")
	}
	h.setExtraConfig(v, vcenter.KeyAdminPause, "")
	h.edit(v, func(vm *model.VirtualMachine) { vm.Annotations["note"] = "lifted" }) // power looks again
	h.waitLabel(v, "")
	h.waitUntil("power released the VM", func() bool { return h.powerReleased(v) }, func() string { return "not released" })
}

// An admin's pause stands while the VM cannot be read (here destroyed behind vmop's back;
// an admin may unregister a VM to restore it).
func TestAdminPauseStandsWithoutTheVM(t *testing.T) {
	h := start(t)
	v := h.powered("admin-paused-gone")
	h.setExtraConfig(v, vcenter.KeyAdminPause, "true")
	h.edit(v, func(vm *model.VirtualMachine) { vm.Annotations["note"] = "power looks" })
	h.waitLabel(v, model.PausedByAdmin)
	if err := deploytest.Destroy(h.ctx, v.vm); err != nil {
		t.Fatal(err)
	}
	h.edit(v, func(vm *model.VirtualMachine) { vm.Annotations["note"] = "power looks again" })
	h.waitHandled(v)
	h.waitLabel(v, model.PausedByAdmin)
}

// powerReleased: power's newest slice about v says it finished its part of the deletion.
func (h *harness) powerReleased(v *testVM) bool {
	h.t.Helper()
	rec, err := events.LastStatus(h.ctx, h.js, v.ref, model.ServicePower)
	return err == nil && rec.Slice.Released
}
