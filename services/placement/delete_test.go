package placement

import (
	"testing"

	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// A VM being deleted is not touched while a delete check remains, and the condition says
// which; once the checks are gone it is powered off, destroyed and released.
func TestDeleteWaitsForDeleteChecks(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	h.runService()

	v := newTestVM("checked-vm")
	v.labels = map[string]any{model.LabelZone: "zone-a"}
	v.annotations = map[string]any{
		model.DeleteCheckPrefix + "ad":  "waiting on computer object",
		model.DeleteCheckPrefix + "net": "waiting on net auth",
	}
	h.putVM(v, false)
	h.waitSlice(v.ref, "created", created)
	powerOn(t, h, v.uid)

	h.putVM(v, true)
	slice, st := h.waitSlice(v.ref, "delete blocked", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		return condition(st, model.ConditionDeleteChecksCleared).Status == metav1.ConditionFalse
	})
	c := condition(st, model.ConditionDeleteChecksCleared)
	want := "the VM is not destroyed while delete checks remain: ad (waiting on computer object), net (waiting on net auth)"
	if c.Reason != model.ReasonDeleteChecksPending || c.Message != want {
		t.Errorf("%s = %s %q, want %s %q", c.Type, c.Reason, c.Message, model.ReasonDeleteChecksPending, want)
	}
	if slice.Released || !isTrue(st, model.ConditionCreated) || st.UniqueID == "" {
		t.Errorf("blocked delete: released %v, Created %v, uniqueID %q; want not released, the VM still reported", slice.Released,
			condition(st, model.ConditionCreated).Status, st.UniqueID)
	}
	if n := len(h.vmsOf(v.uid)); n != 1 {
		t.Fatalf("%d VMs while delete checks remain, want 1", n)
	}

	v.annotations = nil
	h.putVM(v, true)
	slice, st = h.waitSlice(v.ref, "released", func(s events.Slice, _ model.VirtualMachineStatus) bool { return s.Released })
	if !isTrue(st, model.ConditionDeleteChecksCleared) {
		t.Errorf("%s = %+v, want True", model.ConditionDeleteChecksCleared, condition(st, model.ConditionDeleteChecksCleared))
	}
	if n := len(h.vmsOf(v.uid)); n != 0 {
		t.Errorf("%d VMs after the delete, want 0", n)
	}
}

// A VM an admin paused in vSphere is not destroyed, and the slice says paused by Admin,
// until the admin lifts the pause (power then labels it so, and no service acts on it).
func TestDeleteWaitsForTheAdminPause(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	h.runService()

	v := newTestVM("admin-paused-vm")
	v.labels = map[string]any{model.LabelZone: "zone-a"}
	h.putVM(v, false)
	h.waitSlice(v.ref, "created", created)
	vms := h.vmsOf(v.uid)
	if len(vms) != 1 {
		t.Fatalf("%d VMs with uid %s, want 1", len(vms), v.uid)
	}
	adminPause := func(value string) {
		t.Helper()
		task, err := objectVM(h, vms[0]).Reconfigure(h.ctx, types.VirtualMachineConfigSpec{ExtraConfig: []types.BaseOptionValue{
			&types.OptionValue{Key: vcenter.KeyAdminPause, Value: value}}})
		if err == nil {
			err = task.Wait(h.ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	adminPause("true")

	h.putVM(v, true)
	slice, st := h.waitSlice(v.ref, "delete held", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		return condition(st, model.ConditionReconcileReady).Status == metav1.ConditionFalse
	})
	if c := condition(st, model.ConditionReconcileReady); c.Reason != model.ReasonReconcilePaused || c.Message != "Virtual Machine reconciliation paused by Admin" {
		t.Errorf("%s = %s %q, want paused by Admin", c.Type, c.Reason, c.Message)
	}
	if slice.Released || len(h.vmsOf(v.uid)) != 1 {
		t.Fatalf("released %v with %d VMs while an admin pauses it; want the VM kept", slice.Released, len(h.vmsOf(v.uid)))
	}

	// Power labels it; the admin lifts the pause; power takes the label away.
	v.labels[model.LabelPaused] = model.PausedByAdmin
	h.putVM(v, true)
	adminPause("")
	delete(v.labels, model.LabelPaused)
	h.putVM(v, true)
	h.waitSlice(v.ref, "released", func(s events.Slice, _ model.VirtualMachineStatus) bool { return s.Released })
	if n := len(h.vmsOf(v.uid)); n != 0 {
		t.Errorf("%d VMs after the delete, want 0", n)
	}
}

// A VM that was never created (its class is missing) is released at once.
func TestDeleteNeverCreatedReleases(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	h.runService()

	v := newTestVM("never-created-vm")
	v.className = "no-such-class"
	h.putVM(v, false)
	h.waitSlice(v.ref, "class missing", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		return condition(st, model.ConditionClassReady).Reason == model.ReasonNotFound
	})
	h.putVM(v, true)
	h.waitSlice(v.ref, "released", func(s events.Slice, _ model.VirtualMachineStatus) bool { return s.Released })
}

// powerOn powers the object's VM on, as the power service would, so the delete has to
// power it off first.
func powerOn(t *testing.T, h *harness, uid string) {
	t.Helper()
	vms := h.vmsOf(uid)
	if len(vms) != 1 {
		t.Fatalf("%d VMs with uid %s, want 1", len(vms), uid)
	}
	task, err := objectVM(h, vms[0]).PowerOn(h.ctx)
	if err == nil {
		err = task.Wait(h.ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
}
