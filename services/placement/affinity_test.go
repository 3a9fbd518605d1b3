package placement

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/model"
)

// affinityVM is a group member with the seed's affinity example: label key=value, one
// required term of kind ("vmAffinity" or "vmAntiAffinity") selecting key=selects at
// topologyKey.
func affinityVM(prefix, key, value, kind, selects, topologyKey string) testVM {
	v := newTestVM(prefix)
	v.labels = map[string]any{key: value}
	v.spec = map[string]any{"groupName": "my-vm-group", "affinity": map[string]any{
		kind: map[string]any{"requiredDuringSchedulingPreferredDuringExecution": []any{
			map[string]any{"labelSelector": map[string]any{"matchLabels": map[string]any{key: selects}}, "topologyKey": topologyKey},
		}},
	}}
	return v
}

// unique is a label value no earlier run (-count) used: the shared vcsim keeps rules
// named after it.
func unique(s string) string { return s + "-" + uuid.NewString()[:8] }

// Three VMs with the seed's zone affinity example land in one zone, whichever the first
// one got; a zone affinity rule keeps them there in that zone's cluster.
func TestZoneAffinityPlacesInOneZone(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	h.runService()

	app := unique("my-app")
	var zones []string
	var refs []string
	for i := range 3 {
		v := affinityVM("affine", "app", app, "vmAffinity", app, model.TopologyKeyZone)
		h.putVM(v, false)
		_, st := h.waitSlice(v.ref, "created", created)
		zones = append(zones, st.Zone)
		refs = append(refs, st.UniqueID)
		if c := condition(st, model.ConditionPlacementReady); c.Status != metav1.ConditionTrue {
			t.Errorf("VM %d: PlacementReady %+v", i, c)
		}
	}
	if zones[0] == "" || zones[1] != zones[0] || zones[2] != zones[0] {
		t.Fatalf("zones %v, want one zone for all", zones)
	}
	cfg := h.clusterConfig(zones[0])
	g := vmGroupNamed(cfg, func(name string) bool { return strings.HasPrefix(name, rulePrefix+testNamespace) }, refs[0])
	if g == nil {
		t.Fatalf("no vmop VM group in the cluster of %s holds %s", zones[0], refs[0])
	}
	if got := morefValues(g.Vm); !sameSet(got, refs) {
		t.Errorf("VM group %s holds %v, want %v", g.Name, got, refs)
	}
}

// Host anti-affinity inside one zone: two VMs go to its two hosts, the third has nowhere to
// go and is not created (and says why); the cluster's anti-affinity rule names the two, and
// it is gone once they are deleted.
func TestHostAntiAffinity(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	h.runService()

	tier := unique("database")
	zone := zoneOf(t, "zone-a")
	vms, sts := h.createdApart("anti", tier, zone.Name, 2)
	var hosts, refs []string
	for _, st := range sts {
		hosts = append(hosts, st.NodeName)
		refs = append(refs, st.UniqueID)
	}
	if hosts[0] == hosts[1] || !slices.Contains(zone.Hosts, hosts[0]) || !slices.Contains(zone.Hosts, hosts[1]) {
		t.Fatalf("hosts %v, want the two different hosts of %v", hosts, zone.Hosts)
	}

	third := affinityVM("anti", "tier", tier, "vmAntiAffinity", tier, model.TopologyKeyHostname)
	third.labels[model.LabelZone] = zone.Name
	seq := h.putVM(third, false)
	_, st := h.waitSlice(third.ref, "unplaceable", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		return condition(st, model.ConditionPlacementReady).Reason == reasonAffinityUnsatisfiable
	})
	if c := condition(st, model.ConditionPlacementReady); !strings.Contains(c.Message, "vmAntiAffinity.requiredDuringSchedulingPreferredDuringExecution[0]") {
		t.Errorf("PlacementReady message %q does not name the term", c.Message)
	}
	if isTrue(st, model.ConditionCreated) || st.UniqueID != "" || st.NodeName != "" {
		t.Errorf("third VM: Created %v, uniqueID %q, node %q; want not created", isTrue(st, model.ConditionCreated), st.UniqueID, st.NodeName)
	}
	h.waitProcessed(seq)
	if got := h.vmsOf(third.uid); len(got) != 0 {
		t.Errorf("%d VMs of the third object in vcsim, want none", len(got))
	}

	rule := h.antiAffinityRule(zone.Name, refs[0])
	if rule == nil {
		t.Fatalf("no anti-affinity rule in %s names %s", zone.Cluster, refs[0])
	}
	if got := morefValues(rule.Vm); !sameSet(got, refs) || rule.Mandatory == nil || !*rule.Mandatory {
		t.Errorf("rule %s: VMs %v, mandatory %v; want %v, mandatory", rule.Name, got, rule.Mandatory, refs)
	}

	for _, v := range vms {
		h.putVM(v, true)
		h.waitSlice(v.ref, "released", func(s events.Slice, _ model.VirtualMachineStatus) bool { return s.Released })
	}
	cfg := h.clusterConfig(zone.Name)
	for _, r := range cfg.Rule {
		if r.GetClusterRuleInfo().Name == rule.Name {
			t.Errorf("rule %s is still in %s after its VMs were deleted", rule.Name, zone.Cluster)
		}
	}
}

// A host anti-affinity term keeps the VM declaring it apart from each VM it selects, not
// those VMs from each other, and holds both ways. Two web VMs keep off the hosts of the
// database VMs (which declare nothing), created one at a time: a database VM, the two web
// VMs, another database VM. The webs share one host and the databases the other, and
// every web–database pair, and only those, has its mandatory rule of two VMs, the one
// created last included; deleting a web VM removes its pairs only.
func TestHostAntiAffinityKeepsPairsApart(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	h.runService()

	db, web := unique("db"), unique("web")
	zone := zoneOf(t, "zone-a")
	database := func() testVM {
		v := newTestVM("db")
		v.labels = map[string]any{"tier": db, model.LabelZone: zone.Name}
		return v
	}
	vms := []testVM{database(), webApart(web, db, zone.Name), webApart(web, db, zone.Name), database()}
	db1, web1, web2, db2 := vms[0].ref.Name, vms[1].ref.Name, vms[2].ref.Name, vms[3].ref.Name
	names, hosts := map[string]string{}, map[string]string{} // by moref, by name
	for _, v := range vms {
		h.putVM(v, false)
		_, st := h.waitSlice(v.ref, "created", created)
		names[st.UniqueID], hosts[v.ref.Name] = v.ref.Name, st.NodeName
	}
	if hosts[web1] == hosts[db1] || hosts[web2] != hosts[web1] || hosts[db2] != hosts[db1] {
		t.Fatalf("hosts %v: want the web VMs on one host, the database VMs on the other", hosts)
	}

	pairs := func() []string {
		var out []string
		for _, r := range h.clusterConfig(zone.Name).Rule {
			a, ok := r.(*types.ClusterAntiAffinityRuleSpec)
			if !ok || !strings.HasPrefix(a.Name, rulePrefix) {
				continue
			}
			var members []string
			for _, ref := range morefValues(a.Vm) {
				if n, ok := names[ref]; ok {
					members = append(members, n)
				}
			}
			if len(members) == 0 {
				continue // another test's
			}
			if len(a.Vm) != 2 || a.Mandatory == nil || !*a.Mandatory {
				t.Errorf("rule %s: VMs %v, mandatory %v; want a mandatory pair", a.Name, members, a.Mandatory)
			}
			slices.Sort(members)
			out = append(out, strings.Join(members, "+"))
		}
		slices.Sort(out)
		return out
	}
	pair := func(a, b string) string { return strings.Join(slices.Sorted(slices.Values([]string{a, b})), "+") }
	want := slices.Sorted(slices.Values([]string{pair(db1, web1), pair(db1, web2), pair(db2, web1), pair(db2, web2)}))
	if got := pairs(); !slices.Equal(got, want) {
		t.Errorf("anti-affinity rules keep apart %v, want %v", got, want)
	}

	h.putVM(vms[1], true)
	h.waitSlice(vms[1].ref, "released", func(s events.Slice, _ model.VirtualMachineStatus) bool { return s.Released })
	want = slices.Sorted(slices.Values([]string{pair(db1, web2), pair(db2, web2)}))
	if got := pairs(); !slices.Equal(got, want) {
		t.Errorf("after %s was deleted, anti-affinity rules keep apart %v, want %v", web1, got, want)
	}
}

// webApart is a VM labelled tier=web in zone whose required host anti-affinity term
// selects tier=db.
func webApart(web, db, zone string) testVM {
	v := affinityVM("web", "tier", web, "vmAntiAffinity", db, model.TopologyKeyHostname)
	v.labels[model.LabelZone] = zone
	return v
}

// createdApart creates n VMs labelled tier, kept on different hosts of zone by a required
// anti-affinity term, one after the other, and returns them and their slices once each is
// created.
func (h *harness) createdApart(prefix, tier, zone string, n int) ([]testVM, []model.VirtualMachineStatus) {
	h.t.Helper()
	var vms []testVM
	var sts []model.VirtualMachineStatus
	for range n {
		v := affinityVM(prefix, "tier", tier, "vmAntiAffinity", tier, model.TopologyKeyHostname)
		v.labels[model.LabelZone] = zone
		h.putVM(v, false)
		_, st := h.waitSlice(v.ref, "created", created)
		vms, sts = append(vms, v), append(sts, st)
	}
	return vms, sts
}

// A required affinity term selecting no VM at all (not even its own) can never be met:
// the VM says so and nothing is created or labelled.
func TestAffinitySelectingNothing(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	h.runService()

	v := affinityVM("lonely", "app", unique("mine"), "vmAffinity", unique("nobody"), model.TopologyKeyZone)
	seq := h.putVM(v, false)
	_, st := h.waitSlice(v.ref, "invalid affinity", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		return condition(st, model.ConditionPlacementReady).Reason == reasonAffinityInvalid
	})
	if c := condition(st, model.ConditionPlacementReady); !strings.Contains(c.Message, "selects no VM") {
		t.Errorf("PlacementReady message %q", c.Message)
	}
	h.waitProcessed(seq)
	rec, err := events.LastSpec(h.ctx, h.js, v.ref)
	if err != nil {
		t.Fatal(err)
	}
	var stored model.VirtualMachine
	if err := json.Unmarshal(rec.Body, &stored); err != nil {
		t.Fatal(err)
	}
	if rec.Seq != seq || stored.Labels[model.LabelZone] != "" || len(h.vmsOf(v.uid)) != 0 || st.Zone != "" {
		t.Errorf("record %d (want %d), zone label %q, status zone %q: want nothing chosen, nothing created",
			rec.Seq, seq, stored.Labels[model.LabelZone], st.Zone)
	}
}

// clusterConfig reads the rules and groups of the zone's cluster.
func (h *harness) clusterConfig(zoneName string) *types.ClusterConfigInfoEx {
	h.t.Helper()
	cc, err := find.NewFinder(h.vc.Client).ClusterComputeResource(h.ctx, "/"+inventory.Datacenter+"/host/"+zoneOf(h.t, zoneName).Cluster)
	if err != nil {
		h.t.Fatal(err)
	}
	var m mo.ClusterComputeResource
	if err := cc.Properties(h.ctx, cc.Reference(), []string{"configurationEx"}, &m); err != nil {
		h.t.Fatal(err)
	}
	return m.ConfigurationEx.(*types.ClusterConfigInfoEx)
}

// antiAffinityRule is the vmop anti-affinity rule of the zone's cluster naming the VM.
func (h *harness) antiAffinityRule(zoneName, vm string) *types.ClusterAntiAffinityRuleSpec {
	for _, r := range h.clusterConfig(zoneName).Rule {
		if a, ok := r.(*types.ClusterAntiAffinityRuleSpec); ok && strings.HasPrefix(a.Name, rulePrefix) && slices.Contains(morefValues(a.Vm), vm) {
			return a
		}
	}
	return nil
}

func vmGroupNamed(cfg *types.ClusterConfigInfoEx, name func(string) bool, vm string) *types.ClusterVmGroup {
	for _, g := range cfg.Group {
		if v, ok := g.(*types.ClusterVmGroup); ok && name(v.Name) && slices.Contains(morefValues(v.Vm), vm) {
			return v
		}
	}
	return nil
}

func morefValues(refs []types.ManagedObjectReference) []string {
	out := make([]string, 0, len(refs))
	for _, r := range refs {
		out = append(out, r.Value)
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	return slices.Equal(a, b)
}
