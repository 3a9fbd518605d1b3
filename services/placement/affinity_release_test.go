package placement

import (
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// A VM deleted with the skip-delete-platform annotation stays in vCenter but leaves vmop's
// cluster rules, as a destroyed one does: the anti-affinity rule of two VMs goes with the
// first one released, rather than keeping a VM vmop no longer manages.
func TestReleasedVMLeavesItsRules(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	h.runService()

	zone := zoneOf(t, "zone-a")
	vms, sts := h.createdApart("kept", unique("kept"), zone.Name, 2)
	moref := sts[0].UniqueID
	if h.antiAffinityRule(zone.Name, moref) == nil {
		t.Fatalf("no anti-affinity rule in %s names %s", zone.Cluster, moref)
	}

	kept := vms[0]
	kept.annotations = map[string]any{model.AnnotationSkipDeletePlatform: ""}
	h.putVM(kept, true)
	h.waitSlice(kept.ref, "released", func(s events.Slice, _ model.VirtualMachineStatus) bool { return s.Released })
	ref := types.ManagedObjectReference{Type: "VirtualMachine", Value: moref}
	var vm mo.VirtualMachine
	if err := object.NewVirtualMachine(h.vc.Client, ref).Properties(h.ctx, ref, []string{"name"}, &vm); err != nil {
		t.Fatalf("the released VM %s: %v, want it kept in vCenter", moref, err)
	}
	if rule := h.antiAffinityRule(zone.Name, moref); rule != nil {
		t.Errorf("rule %s still names the released VM %s: %v", rule.Name, moref, morefValues(rule.Vm))
	}
}
