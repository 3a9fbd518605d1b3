package placement

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/model"
)

// A member's decision for its whole group places the other members with the hosts of the
// VMs their own affinity keeps them from, not only those its own affinity needs: app-2,
// kept off the database VMs' hosts, is never labelled into zone-a, whose two hosts they
// hold, by app-1's decision (which has no affinity of its own), where its own reconcile
// would find no host and its label could not be changed. Six groups, each decided by
// app-1: vCenter's choice between the zones is free, so without those hosts about half
// would land in zone-a.
func TestGroupDecisionKnowsTheHostsOtherMembersAvoid(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	tier := unique("database")
	vmIn := func(prefix, group string, labels map[string]any, avoidsTier bool) testVM {
		v := newTestVM(prefix)
		v.labels = labels
		v.spec = map[string]any{"groupName": group}
		if avoidsTier {
			v.spec["affinity"] = map[string]any{"vmAntiAffinity": map[string]any{"requiredDuringSchedulingPreferredDuringExecution": []any{
				map[string]any{"labelSelector": map[string]any{"matchLabels": map[string]any{"tier": tier}}, "topologyKey": model.TopologyKeyHostname}}}}
		}
		h.putVM(v, false)
		return v
	}
	h.putGroup("dbs", "", "")
	for i, host := range []string{"esx-a1", "esx-a2"} {
		db := vmIn(fmt.Sprintf("db-%d", i), "dbs", map[string]any{"tier": tier, model.LabelZone: "zone-a"}, true)
		h.placedAt(db, "zone-a", host)
	}
	r := h.newTestReconciler()
	for i := range 6 {
		group := fmt.Sprintf("app%d", i)
		h.putGroup(group, "", "")
		app1 := vmIn("app-1", group, map[string]any{"app": "web"}, false)
		app2 := vmIn("app-2", group, map[string]any{"tier": tier}, true)
		if _, err := r.reconcile(h.ctx, h.object(app1.ref)); err != nil {
			t.Fatal(err)
		}
		if z := h.zoneLabel(app2.ref); z == "zone-a" {
			t.Errorf("group %s: app-2 labelled zone-a, where the database VMs hold both hosts its anti-affinity excludes", group)
		}
	}
}

// placedAt publishes v's placement slice: created in zone on host, as placement reports it.
func (h *harness) placedAt(v testVM, zone, host string) {
	h.t.Helper()
	h.publishSlice(v, model.VirtualMachineStatus{Zone: zone, NodeName: host, UniqueID: "vm-placed-" + v.uid[:8],
		Conditions: []metav1.Condition{{Type: model.ConditionCreated, Status: metav1.ConditionTrue, Reason: model.ReasonTrue, LastTransitionTime: metav1.Now()}}})
}
