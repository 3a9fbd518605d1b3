package placement

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// putGroup stores a VirtualMachineGroup named name, in group parent ("" for none),
// labelled with zone ("" for none).
func (h *harness) putGroup(name, parent, zone string) {
	h.t.Helper()
	meta := map[string]any{"name": name, "namespace": testNamespace}
	if zone != "" {
		meta["labels"] = map[string]any{model.LabelZone: zone}
	}
	spec := map[string]any{}
	if parent != "" {
		spec["groupName"] = parent
	}
	h.putObject(map[string]any{"apiVersion": model.GroupVMOperator + "/" + model.VersionVMOperator,
		"kind": "VirtualMachineGroup", "metadata": meta, "spec": spec})
}

// memberVM is a VM naming group.
func memberVM(prefix, group string) testVM {
	v := newTestVM(prefix)
	v.spec = map[string]any{"groupName": group}
	return v
}

// zoneLabel is the zone label of ref's latest record.
func (h *harness) zoneLabel(ref events.Ref) string {
	h.t.Helper()
	rec, err := events.LastSpec(h.ctx, h.js, ref)
	if err != nil {
		h.t.Fatal(err)
	}
	var vm model.VirtualMachine
	if err := json.Unmarshal(rec.Body, &vm); err != nil {
		h.t.Fatal(err)
	}
	return vm.Labels[model.LabelZone]
}

// One reconcile of one member places a group of four with a group-level zone: the others'
// zones are recorded with it (their labels), before any of their own reconciles; each then
// lands in that zone.
func TestGroupWithZonePlacedInOneDecision(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	group := "grp-" + unique("zoned")
	h.putGroup(group, "", "zone-b")
	var vms []testVM
	for range 4 {
		v := memberVM("member", group)
		h.putVM(v, false)
		vms = append(vms, v)
	}

	r := h.newTestReconciler()
	res, err := r.reconcile(h.ctx, h.object(vms[0].ref))
	if err != nil {
		t.Fatal(err)
	}
	if st := statusOf(t, res); st.Zone != "zone-b" || !isTrue(st, model.ConditionCreated) {
		t.Fatalf("first member: zone %q, Created %+v; want created in zone-b", st.Zone, condition(st, model.ConditionCreated))
	}
	for _, v := range vms {
		if got := h.zoneLabel(v.ref); got != "zone-b" {
			t.Errorf("after one reconcile, %s's zone label is %q, want zone-b: the group is placed in one decision", v.ref.Name, got)
		}
	}

	h.runService()
	for _, v := range vms {
		if _, st := h.waitSlice(v.ref, "created", created); st.Zone != "zone-b" {
			t.Errorf("%s in zone %q, want zone-b", v.ref.Name, st.Zone)
		}
		if n := len(h.vmsOf(v.uid)); n != 1 {
			t.Errorf("%s: %d VMs in vcsim, want 1", v.ref.Name, n)
		}
	}
}

// Without a zone, the members of a group and of its nested group are decided together, in
// one reconcile of any of them; zone affinity between them puts them in one zone.
func TestNestedGroupPlacedTogether(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	outer, inner := "outer-"+unique("g"), "inner-"+unique("g")
	h.putGroup(outer, "", "")
	h.putGroup(inner, outer, "")
	app := unique("app")
	var vms []testVM
	for i := range 4 {
		v := affinityVM("nested", "app", app, "vmAffinity", app, model.TopologyKeyZone)
		v.spec["groupName"] = []string{outer, inner}[i%2]
		h.putVM(v, false)
		vms = append(vms, v)
	}

	r := h.newTestReconciler()
	res, err := r.reconcile(h.ctx, h.object(vms[3].ref))
	if err != nil {
		t.Fatal(err)
	}
	zone := statusOf(t, res).Zone
	if zone == "" {
		t.Fatal("the reconciled member reports no zone")
	}
	for _, v := range vms {
		if got := h.zoneLabel(v.ref); got != zone {
			t.Errorf("%s's zone label %q, want %s like the member reconciled", v.ref.Name, got, zone)
		}
	}
}

// A group labelled with a zone vCenter does not have: its members say so and nothing is
// created or labelled.
func TestGroupZoneNotFound(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	group := "grp-" + unique("nowhere")
	h.putGroup(group, "", "zone-nowhere")
	v := memberVM("lost", group)
	seq := h.putVM(v, false)
	h.runService()
	_, st := h.waitSlice(v.ref, "group zone refused", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		return condition(st, model.ConditionPlacementReady).Reason == reasonGroupZoneNotFound
	})
	if msg := condition(st, model.ConditionPlacementReady).Message; !strings.Contains(msg, `"zone-nowhere"`) || !strings.Contains(msg, group) {
		t.Errorf("PlacementReady message %q names neither the zone nor the group", msg)
	}
	h.waitProcessed(seq)
	if h.zoneLabel(v.ref) != "" || len(h.vmsOf(v.uid)) != 0 || st.Zone != "" || isTrue(st, model.ConditionCreated) {
		t.Errorf("zone label %q, %d VMs, status zone %q: want nothing chosen, nothing created", h.zoneLabel(v.ref), len(h.vmsOf(v.uid)), st.Zone)
	}
}
