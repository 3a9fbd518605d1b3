package placement

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/model"
)

// An edit of a cluster's rules reads a rule and writes it back whole, so two edits at once
// would keep only one of the VMs they add. The cluster's scope keeps them one at a time
// over every replica: eight VMs join one anti-affinity rule at once, through the
// reconcilers of two replicas (two connections, so two lease sets), and the rule names
// every one of them.
func TestRuleEditsAtOnceKeepEveryVM(t *testing.T) {
	h := newHarness(t)
	replicas := []*reconciler{h.newTestReconciler(), h.newTestReconciler()}
	replicas[1].js = eventstest.Reconnect(t, h.js)
	topo, err := replicas[0].topology(h.ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	z := topo.zones[inventory.Zones[0].Name]

	apart := unique("apart")
	spec := &model.AffinitySpec{VMAntiAffinity: &model.VMAntiAffinitySpec{
		RequiredDuringSchedulingPreferredDuringExecution: []model.VMAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": apart}},
			TopologyKey:   model.TopologyKeyHostname,
		}},
	}}
	labels := map[string]string{"tier": apart}
	vms := make([]types.ManagedObjectReference, 10)
	for i := range vms {
		vms[i] = h.createPlainVM(topo, z, fmt.Sprintf("%s-%d", apart, i))
	}
	// The rule exists with the first two, as after the second VM of the term was created.
	peers := []peer{{name: "second", labels: labels, affinity: spec, zone: z.name}}
	second := map[string]types.ManagedObjectReference{"second": vms[1]}
	if err := replicas[0].ensureRules(h.ctx, testNamespace, "first", labels, spec, z, vms[0], peers, second); err != nil {
		t.Fatal(err)
	}

	// Each of the others joins it as the first one's peer, as all declare the term.
	first := []peer{{name: "first", labels: labels, affinity: spec, zone: z.name}}
	firstInZone := map[string]types.ManagedObjectReference{"first": vms[0]}
	var wg sync.WaitGroup
	for i, vm := range vms[2:] {
		r := replicas[i%len(replicas)]
		wg.Go(func() {
			if err := r.ensureRules(h.ctx, testNamespace, fmt.Sprintf("other-%d", i), labels, spec, z, vm, first, firstInZone); err != nil {
				t.Errorf("ensureRules of %s: %v", vm.Value, err)
			}
		})
	}
	wg.Wait()

	rule := h.antiAffinityRule(z.name, vms[0].Value)
	if rule == nil {
		t.Fatalf("no anti-affinity rule in %s names %s", z.name, vms[0].Value)
	}
	var missing []string
	for _, vm := range vms {
		if !slices.Contains(rule.Vm, vm) {
			missing = append(missing, vm.Value)
		}
	}
	if len(missing) > 0 {
		t.Errorf("rule %s names %v; the edits at once lost %v", rule.Name, morefValues(rule.Vm), missing)
	}
}

// createPlainVM creates an empty VM in the zone's cluster, for rules to name.
func (h *harness) createPlainVM(topo *topology, z zone, name string) types.ManagedObjectReference {
	h.t.Helper()
	folder := object.NewFolder(h.vc.Client, topo.vmFolder.Reference())
	task, err := folder.CreateVM(h.ctx, types.VirtualMachineConfigSpec{
		Name: name, GuestId: "otherGuest64",
		Files: &types.VirtualMachineFileInfo{VmPathName: "[" + inventory.SharedDatastore + "]"},
	}, object.NewResourcePool(h.vc.Client, z.pool), object.NewHostSystem(h.vc.Client, z.hosts[0]))
	if err != nil {
		h.t.Fatal(err)
	}
	info, err := task.WaitForResult(h.ctx)
	if err != nil {
		h.t.Fatalf("create VM %s: %v", name, err)
	}
	vm := info.Result.(types.ManagedObjectReference)
	h.t.Cleanup(func() {
		if task, err := object.NewVirtualMachine(h.vc.Client, vm).Destroy(h.ctx); err == nil {
			_ = task.Wait(h.ctx)
		}
	})
	return vm
}

// A VM without terms keeps the pair rule of a peer whose required term selects it even
// when that peer was recorded after the VM's own decision: the peer kept its rules while
// this VM did not exist in vCenter, so this VM's rules are the pair's last chance, and
// they read the namespace as it is when they are kept.
func TestVMWithoutTermsJoinsAPeerRecordedAfterItsRead(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	h.runService()

	db := unique("db")
	zone := zoneOf(t, "zone-a")
	web := webApart(unique("web"), db, zone.Name)
	h.putVM(web, false)
	_, webSt := h.waitSlice(web.ref, "created", created)

	r := h.newTestReconciler()
	topo, err := r.topology(h.ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	z := topo.zones[zone.Name]
	name := "db-" + db
	ref := h.createPlainVM(topo, z, name)
	vm := &model.VirtualMachine{}
	vm.Name, vm.Namespace, vm.Labels = name, testNamespace, map[string]string{"tier": db, model.LabelZone: zone.Name}
	st := &model.VirtualMachineStatus{Zone: zone.Name, UniqueID: ref.Value}
	if err := r.keepRules(h.ctx, topo, vmIdentity{namespace: testNamespace, name: name}, vm, st); err != nil {
		t.Fatal(err)
	}
	rule := h.antiAffinityRule(zone.Name, ref.Value)
	if rule == nil || !sameSet(morefValues(rule.Vm), []string{webSt.UniqueID, ref.Value}) {
		t.Fatalf("rule naming %s: %+v, want the pair with the web VM %s", ref.Value, rule, webSt.UniqueID)
	}
}
