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
	for _, o := range seeded.objs {
		meta, _ := o["metadata"].(map[string]any)
		if o["kind"] != "VirtualMachineClass" || meta["name"] != inventory.SeedClassName || meta["namespace"] != testNamespace {
			continue
		}
		obj := deepCopy(h.t, o)
		obj["metadata"].(map[string]any)["name"] = name
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
