package placement

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// seedInstanceStorageClass appends the seeded class as name, with instance storage volumes of
// the sizes.
func (h *harness) seedInstanceStorageClass(name string, sizes ...string) {
	h.t.Helper()
	h.seedInstanceStorageClassIn(testNamespace, name, sizes...)
}

// seedInstanceStorageClassIn is seedInstanceStorageClass in namespace.
func (h *harness) seedInstanceStorageClassIn(namespace, name string, sizes ...string) {
	h.t.Helper()
	for _, o := range seeded.objs {
		meta, _ := o["metadata"].(map[string]any)
		if o["kind"] != "VirtualMachineClass" || meta["name"] != inventory.SeedClassName || meta["namespace"] != testNamespace {
			continue
		}
		obj := deepCopy(h.t, o)
		obj["metadata"].(map[string]any)["name"] = name
		obj["metadata"].(map[string]any)["namespace"] = namespace
		var vols []any
		for _, s := range sizes {
			vols = append(vols, map[string]any{"size": s})
		}
		spec := obj["spec"].(map[string]any)
		hw, _ := spec["hardware"].(map[string]any)
		if hw == nil {
			hw = map[string]any{}
			spec["hardware"] = hw
		}
		hw["instanceStorage"] = map[string]any{"storageClass": testStorageClass, "volumes": vols}
		h.putObject(obj)
		return
	}
	h.t.Fatalf("no seeded class %s", inventory.SeedClassName)
}

// A VM of a class with instance storage goes to a host with a local datastore large enough
// (only the instance-storage hosts have one); the host is recorded on the VM with the
// instance volumes, written once, before the create; a class asking more than any local
// datastore holds leaves the VM uncreated with the reason.
func TestInstanceStorageHost(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	h.seedInstanceStorageClass("instance-class", "100Gi", "50Gi")
	h.seedInstanceStorageClass("huge-instance-class", "2Ti")
	h.runService()

	v := newTestVM("instance-vm")
	v.className = "instance-class"
	h.putVM(v, false)
	_, st := h.waitSlice(v.ref, "created", created)
	if !slices.Contains(inventory.InstanceStorageHosts, st.NodeName) {
		t.Errorf("VM on host %s, want one of the hosts with local storage %v", st.NodeName, inventory.InstanceStorageHosts)
	}
	vms := h.vmsOf(v.uid)
	if len(vms) != 1 || hostName(t, h, *vms[0].Runtime.Host) != st.NodeName {
		t.Fatalf("%d VMs in vcsim for the object, want 1 on %s", len(vms), st.NodeName)
	}
	local, err := vcenter.LocalDatastores(h.ctx, h.vc.Client, []types.ManagedObjectReference{*vms[0].Runtime.Host})
	if err != nil {
		t.Fatal(err)
	}
	if dss := local[*vms[0].Runtime.Host]; len(dss) == 0 || dss[0].Name != inventory.LocalDatastore(st.NodeName) {
		t.Errorf("local datastores of the VM's host: %v, want %s", dss, inventory.LocalDatastore(st.NodeName))
	}

	rec, err := events.LastSpec(h.ctx, h.js, v.ref)
	if err != nil {
		t.Fatal(err)
	}
	var vm model.VirtualMachine
	if err := json.Unmarshal(rec.Body, &vm); err != nil {
		t.Fatal(err)
	}
	if got := vm.Annotations[model.AnnotationInstanceStorageSelectedNode]; got != st.NodeName {
		t.Errorf("selected-node annotation %q, want %s", got, st.NodeName)
	}
	if got := vm.Annotations[model.AnnotationInstanceStorageSelectedNodeMOID]; got != vms[0].Runtime.Host.Value {
		t.Errorf("selected-node-moid annotation %q, want %s", got, vms[0].Runtime.Host.Value)
	}
	if vm.Generation != 2 || vm.Labels[model.LabelZone] != st.Zone {
		t.Errorf("record: generation %d, zone label %q; want 2 (volumes added once), %s", vm.Generation, vm.Labels[model.LabelZone], st.Zone)
	}
	var sizes []string
	for _, vol := range vm.Spec.Volumes {
		if c := vol.PersistentVolumeClaim; c != nil && c.InstanceVolumeClaim != nil && c.ClaimName == vol.Name &&
			c.InstanceVolumeClaim.StorageClass == testStorageClass {
			sizes = append(sizes, c.InstanceVolumeClaim.Size.String())
		}
	}
	if !slices.Equal(sizes, []string{"100Gi", "50Gi"}) {
		t.Errorf("instance volumes of the record: %v, want 100Gi and 50Gi", vm.Spec.Volumes)
	}

	huge := newTestVM("huge-instance-vm")
	huge.className = "huge-instance-class"
	h.putVM(huge, false)
	_, st = h.waitSlice(huge.ref, "placement failed", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		return condition(st, model.ConditionPlacementReady).Status == "False"
	})
	c := condition(st, model.ConditionPlacementReady)
	want := resource.MustParse("2Ti")
	if !strings.Contains(c.Message, "local datastore with "+want.String()+" free for the class's instance storage") {
		t.Errorf("PlacementReady %s %q, want the instance storage reason", c.Reason, c.Message)
	}
	if n := len(h.vmsOf(huge.uid)); n != 0 {
		t.Errorf("%d VMs created without room for their instance storage", n)
	}
}

// A host's local datastore counts the instance storage recorded on it for every namespace's
// VMs, whether their volumes exist yet or not (vcsim never counts them in its free space),
// and hosts are chosen for instance storage one VM at a time: four VMs of four namespaces,
// put at once, each needing 600Gi of the three 1 TB local datastores, end with three VMs on
// three different hosts, and the fourth refused, saying why.
func TestInstanceStorageIsNotOvercommitted(t *testing.T) {
	h := newHarness(t)
	image := h.seedClassWithImage(inventory.PhotonImage)
	namespaces := []string{testNamespace, "instance-b", "instance-c", "instance-d"}
	var vms []testVM
	for _, ns := range namespaces {
		h.seedInstanceStorageClassIn(ns, "big-instance-class", "600Gi")
		if ns != testNamespace {
			img := deepCopy(t, seededObject(t, "VirtualMachineImage", testNamespace, image))
			img["metadata"].(map[string]any)["namespace"] = ns
			h.putObject(img)
		}
		v := newTestVM("big-instance-vm")
		v.ref.Namespace, v.className, v.image = ns, "big-instance-class", image
		vms = append(vms, v)
	}
	h.runService()
	for _, v := range vms {
		h.putVM(v, false)
	}

	hosts := map[string]string{} // VM → host
	var refused []string
	for _, v := range vms {
		_, st := h.waitSlice(v.ref, "created or refused", func(_ events.Slice, st model.VirtualMachineStatus) bool {
			return created(events.Slice{}, st) || condition(st, model.ConditionPlacementReady).Status == "False"
		})
		if !created(events.Slice{}, st) {
			c := condition(st, model.ConditionPlacementReady)
			if !strings.Contains(c.Message, "recorded for other VMs") {
				t.Errorf("%s refused with %q, want the instance storage recorded for the others named", v.ref, c.Message)
			}
			refused = append(refused, v.ref.String())
			continue
		}
		hosts[v.ref.String()] = st.NodeName
	}
	distinct := map[string]bool{}
	for _, host := range hosts {
		distinct[host] = true
	}
	if len(hosts) != 3 || len(distinct) != 3 || len(refused) != 1 {
		t.Errorf("VMs by host %v, refused %v; want three VMs on three different hosts and one refused", hosts, refused)
	}
}

// A VM's instance storage host is visible to the namespace's next decision as soon as the
// decision that recorded it lets the namespace go: a VM kept off its host by anti-affinity,
// decided right after (before the recording reconcile ends), does not take it, which would
// leave the first with its recorded host, the only one it may use, taken for good.
func TestRecordedInstanceStorageHostCountsAtOnce(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	h.seedInstanceStorageClass("inst-class", "100Gi")
	tier := unique("db")
	inZoneA := func(prefix string) testVM {
		v := affinityVM(prefix, "tier", tier, "vmAntiAffinity", tier, model.TopologyKeyHostname)
		v.labels[model.LabelZone] = "zone-a"
		return v
	}
	x := inZoneA("x-db")
	h.putVM(x, false)
	h.placedAt(x, "zone-a", "esx-a1")

	r := h.newTestReconciler()
	b := inZoneA("b-db")
	b.className = "inst-class"
	h.putVM(b, false)
	res, err := r.reconcile(h.ctx, h.object(b.ref)) // records the host; the loop has not published its result
	if err != nil {
		t.Fatal(err)
	}
	recorded := statusOf(t, res).NodeName
	if recorded == "" {
		t.Fatalf("b-db's first pass recorded no host: %+v", statusOf(t, res))
	}

	a := inZoneA("a-db")
	h.putVM(a, false)
	resA, err := r.reconcile(h.ctx, h.object(a.ref))
	if err != nil {
		t.Fatal(err)
	}
	if got := statusOf(t, resA).NodeName; got == recorded {
		t.Errorf("a-db was placed on %s, the host recorded for b-db's instance storage", got)
	}
}
