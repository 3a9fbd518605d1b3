package placement

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// Placement killed while it places a group of ten (one zone by required zone affinity,
// spread over hosts by preferred host anti-affinity) and started again: every member is
// one VM, the cluster has one VM group and one anti-affinity rule naming exactly the ten,
// and reconciling everything once more changes nothing in vCenter.
func TestGroupPlacementSurvivesCrash(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	start := time.Now()
	group, app := "crash-"+unique("g"), unique("app")
	h.putGroup(group, "", "")
	var vms []testVM
	for range 10 {
		v := affinityVM("crash", "app", app, "vmAffinity", app, model.TopologyKeyZone)
		v.spec["groupName"] = group
		v.spec["affinity"].(map[string]any)["vmAntiAffinity"] = map[string]any{"preferredDuringSchedulingPreferredDuringExecution": []any{
			map[string]any{"labelSelector": map[string]any{"matchLabels": map[string]any{"app": app}}, "topologyKey": model.TopologyKeyHostname},
		}}
		h.putVM(v, false)
		vms = append(vms, v)
	}

	// The first placement dies once two members exist.
	ctx, kill := context.WithCancel(h.ctx)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{JetStream: h.js, VCenter: seeded.sim.Endpoint(), Logger: testLogger()})
	}()
	h.waitUntil("two members created", func() bool {
		n := 0
		for _, v := range vms {
			if st, err := events.LastStatus(h.ctx, h.js, v.ref, model.ServicePlacement); err == nil && strings.Contains(string(st.Slice.Status), `"uniqueID"`) {
				n++
			}
		}
		return n >= 2
	})
	kill()
	if err := <-done; err != nil {
		t.Fatalf("killed placement: %v", err)
	}

	h.runService()
	var zone string
	var refs []string
	for _, v := range vms {
		_, st := h.waitSlice(v.ref, "created", created)
		if zone == "" {
			zone = st.Zone
		}
		if st.Zone != zone {
			t.Errorf("%s in zone %s, another member in %s: required zone affinity broken", v.ref.Name, st.Zone, zone)
		}
		if n := len(h.vmsOf(v.uid)); n != 1 {
			t.Errorf("%s: %d VMs in vcsim, want 1", v.ref.Name, n)
		}
		refs = append(refs, st.UniqueID)
	}
	h.waitIdle()

	cfg := h.clusterConfig(zone)
	var groups, antis []string
	for _, g := range cfg.Group {
		if v, ok := g.(*types.ClusterVmGroup); ok && slices.ContainsFunc(v.Vm, func(r types.ManagedObjectReference) bool { return r.Value == refs[0] }) {
			groups = append(groups, v.Name)
			if !sameSet(morefValues(v.Vm), refs) {
				t.Errorf("VM group %s holds %v, want the ten members %v", v.Name, morefValues(v.Vm), refs)
			}
		}
	}
	for _, r := range cfg.Rule {
		if a, ok := r.(*types.ClusterAntiAffinityRuleSpec); ok && slices.Contains(morefValues(a.Vm), refs[0]) {
			antis = append(antis, a.Name)
			if !sameSet(morefValues(a.Vm), refs) || a.Mandatory == nil || *a.Mandatory {
				t.Errorf("anti-affinity rule %s: VMs %v, mandatory %v; want the ten, advisory (preferred)", a.Name, morefValues(a.Vm), a.Mandatory)
			}
		}
	}
	if len(groups) != 1 || len(antis) != 1 {
		t.Errorf("VM groups %v and anti-affinity rules %v hold the members; want one of each", groups, antis)
	}
	before := h.ruleEdits(start)
	t.Logf("%d cluster rule reconfigures for 10 members with 2 rules each, across the crash", before)

	// Everything reconciled once more: nothing to create, nothing to add to a rule.
	r := h.newTestReconciler()
	for _, v := range vms {
		if _, err := r.reconcile(h.ctx, h.object(v.ref)); err != nil {
			t.Fatal(err)
		}
	}
	if after := h.ruleEdits(start); after != before {
		t.Errorf("reconciling the placed members again reconfigured the cluster rules %d times", after-before)
	}
	for _, v := range vms {
		if n := len(h.vmsOf(v.uid)); n != 1 {
			t.Errorf("%s: %d VMs after reconciling again, want 1", v.ref.Name, n)
		}
	}
}

// ruleEdits counts the cluster rule reconfigures that started since.
func (h *harness) ruleEdits(since time.Time) int {
	n := 0
	for _, s := range spans.Ended() {
		if s.Name() == spanClusterRules && s.StartTime().After(since) {
			n++
		}
	}
	return n
}

// waitUntil polls ok until it holds, or fails the test after waitFor.
func (h *harness) waitUntil(what string, ok func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(waitFor)
	for !ok() {
		if time.Now().After(deadline) {
			h.t.Fatalf("waited %v for %s", waitFor, what)
		}
		time.Sleep(pollEvery)
	}
}
