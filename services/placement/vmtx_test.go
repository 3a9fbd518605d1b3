package placement

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// vcCalls records what vcsim was asked about VMs whose name starts with prefix: the
// CloneVM_Task locations (vcsim deploys a VM template item by copying the item's VM) and
// the ReconfigVM_Task specs, and fails reconfigures while failReconfigure is set.
type vcCalls struct {
	mu              sync.Mutex
	copies          map[string][]types.VirtualMachineRelocateSpec // by new VM name
	reconfigures    map[string][]types.VirtualMachineConfigSpec   // by VM name
	failReconfigure bool
}

func (h *harness) recordCalls(prefix string) *vcCalls {
	c := &vcCalls{copies: map[string][]types.VirtualMachineRelocateSpec{}, reconfigures: map[string][]types.VirtualMachineConfigSpec{}}
	seeded.sim.Intercept(func(ctx *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault) {
		c.mu.Lock()
		defer c.mu.Unlock()
		switch req := m.Body.(type) {
		case *types.CloneVM_Task:
			if strings.HasPrefix(req.Name, prefix) {
				c.copies[req.Name] = append(c.copies[req.Name], req.Spec.Location)
			}
		case *types.ReconfigVM_Task:
			vm, ok := ctx.Map.Get(req.This).(*simulator.VirtualMachine)
			if !ok || !strings.HasPrefix(vm.Name, prefix) {
				return nil, nil
			}
			if c.failReconfigure {
				return nil, &types.InvalidState{}
			}
			c.reconfigures[vm.Name] = append(c.reconfigures[vm.Name], req.Spec)
		}
		return nil, nil
	})
	h.t.Cleanup(func() { seeded.sim.Intercept(nil) })
	return c
}

func (c *vcCalls) copiesOf(name string) []types.VirtualMachineRelocateSpec {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.copies[name])
}

func (c *vcCalls) reconfiguresOf(name string) []types.VirtualMachineConfigSpec {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.reconfigures[name])
}

func (c *vcCalls) setFailReconfigure(fail bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failReconfigure = fail
}

// A VM from a VM template (VMTX) image is the item's deploy, configured right after:
// vcsim shows one powered-off VM (not a template) in the namespace folder with the class's
// CPU, memory and allocations, the spec's UUIDs, the keys naming the object and the
// template's two disks, on a host of the zone its label names (the item's VM was copied
// there, once); a minHardwareVersion above the template's is reached by an upgrade.
func TestDeploysVMTemplateItem(t *testing.T) {
	h := newHarness(t)
	image := h.seedClassWithImage(inventory.PhotonVMTX)
	calls := h.recordCalls("vmtx-")
	h.runService()

	for _, tt := range []struct {
		zone  string
		minHW int32 // spec.minHardwareVersion, 0 for none
	}{{"zone-b", 0}, {"zone-c", 20}} {
		t.Run(fmt.Sprintf("%s,minHardwareVersion=%d", tt.zone, tt.minHW), func(t *testing.T) {
			v := newTestVM("vmtx")
			v.image = image
			v.labels = map[string]any{model.LabelZone: tt.zone}
			wantHW := int32(19) // the template's
			if tt.minHW > 0 {
				v.spec = map[string]any{"minHardwareVersion": tt.minHW}
				wantHW = tt.minHW
			}
			h.putVM(v, false)
			_, st := h.waitSlice(v.ref, "created", created)
			vm := h.onlyVMOf(v.uid)
			cfg := vm.Config
			disks := diskGiB(cfg.Hardware.Device)
			got := map[string]any{
				"template": cfg.Template, "power": vm.Runtime.PowerState, "cpus": cfg.Hardware.NumCPU, "memoryMB": cfg.Hardware.MemoryMB,
				"cpuReservation": *cfg.CpuAllocation.Reservation, "memReservation": *cfg.MemoryAllocation.Reservation,
				"biosUUID": cfg.Uuid, "instanceUUID": cfg.InstanceUuid, "object": extraConfig(vm, vcenter.KeyObject),
				"disksGiB": disks, "version": cfg.Version, "folder": h.folderName(vm), "uniqueID": st.UniqueID, "zone": st.Zone,
			}
			want := map[string]any{
				"template": false, "power": types.VirtualMachinePowerStatePoweredOff, "cpus": int32(2), "memoryMB": int32(4096),
				"cpuReservation": int64(200), "memReservation": int64(1024),
				"biosUUID": v.bios, "instanceUUID": v.instance, "object": testNamespace + "/" + v.ref.Name,
				"disksGiB": []int64{20, 10}, "version": fmt.Sprintf("vmx-%d", wantHW), "folder": testNamespace, "uniqueID": vm.Self.Value, "zone": tt.zone,
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("deployed VM in vcsim (-want +got):\n%s", d)
			}
			copies := calls.copiesOf(v.ref.Name)
			if len(copies) != 1 {
				t.Fatalf("the item's VM was copied %d times for the VM, want once", len(copies))
			}
			host := hostName(t, h, *vm.Runtime.Host)
			if copies[0].Host == nil || *copies[0].Host != *vm.Runtime.Host || !slices.Contains(zoneOf(t, tt.zone).Hosts, host) || st.NodeName != host {
				t.Errorf("deploy asked host %v; the VM is on %s (%v), status nodeName %s; want one host of %s",
					copies[0].Host, host, vm.Runtime.Host, st.NodeName, tt.zone)
			}
		})
	}
}

// The deploy of a VM template item asks the chosen place, powered off, and the storage
// class's policy for the VM's home and every disk (vcsim keeps no record of a policy).
func TestTemplateDeploySpec(t *testing.T) {
	ch := choice{
		zone:      zone{pool: types.ManagedObjectReference{Type: "ResourcePool", Value: "resgroup-9"}},
		host:      hostCapacity{ref: types.ManagedObjectReference{Type: "HostSystem", Value: "host-7"}},
		datastore: datastoreCapacity{ref: types.ManagedObjectReference{Type: "Datastore", Value: "datastore-3"}},
		policy:    storagePolicy{class: testStorageClass, id: "aa6d5a82-1c88-45da-85d3-3d74b91a5bad"},
	}
	var got, want map[string]any
	if err := json.Unmarshal(mustJSON(t, templateDeploySpec("my-vm", types.ManagedObjectReference{Type: "Folder", Value: "group-v5"}, ch)), &got); err != nil {
		t.Fatal(err)
	}
	storage := `{"datastore":"datastore-3","storage_policy":{"policy":"aa6d5a82-1c88-45da-85d3-3d74b91a5bad","type":"USE_SPECIFIED_POLICY"}}`
	err := json.Unmarshal([]byte(`{"name":"my-vm","powered_on":false,"disk_storage":`+storage+`,"vm_home_storage":`+storage+`,`+
		`"placement":{"folder":"group-v5","host":"host-7","resource_pool":"resgroup-9"}}`), &want)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("deploy spec (-want +got):\n%s", d)
	}
}

// A placement that stops between a VM template item's deploy and the configuration that
// follows it (a crash: the create recorded, the VM deployed under its name, unconfigured)
// leaves one VM, configured by the next reconcile once the create's grace is over (and
// upgraded to spec.minHardwareVersion), never a second deploy; a redelivery repeats
// nothing.
func TestTemplateItemDeployCutShortIsMended(t *testing.T) {
	h := newHarness(t)
	image := h.seedClassWithImage(inventory.PhotonVMTX)
	calls := h.recordCalls("vmtx-crash-")
	r := h.newTestReconciler()
	v := newTestVM("vmtx-crash")
	v.image = image
	v.labels = map[string]any{model.LabelZone: "zone-a"}
	v.spec = map[string]any{"minHardwareVersion": int32(20)}
	h.putVM(v, false)

	// The reconcile that "crashed": it recorded its create, deployed, and died before the
	// reconfigure (which vcsim fails here, so that nothing more happens).
	p := h.recordCreate(r, v)
	if !p.img.fromTemplateItem() {
		t.Fatalf("image: %+v; want a VM template item", p.img)
	}
	calls.setFailReconfigure(true)
	deployed, err := r.create(h.ctx, p.topo, vmIdentity{testNamespace, v.ref.Name, v.uid}, p.vm.Spec, p.cls, p.img, p.ch, cloneHowOf(&p.vm))
	calls.setFailReconfigure(false)
	if err == nil || deployed.Value == "" {
		t.Fatalf("create with its reconfigure failed: VM %q, err %v; want the VM deployed and an error", deployed.Value, err)
	}

	if _, err := r.reconcile(h.ctx, h.object(v.ref)); err == nil || !strings.Contains(err.Error(), "has not appeared yet") {
		t.Fatalf("reconcile within the grace: err = %v, want a wait", err)
	}
	r.now = func() time.Time { return time.Now().Add(r.grace + time.Second) }
	res, err := r.reconcile(h.ctx, h.object(v.ref))
	r.now = time.Now
	if err != nil {
		t.Fatal(err)
	}
	st := statusOf(t, res)
	vms := h.vmsOf(v.uid)
	if len(vms) != 1 || !isTrue(st, model.ConditionCreated) || st.UniqueID != deployed.Value {
		t.Fatalf("%d VMs with the uid, Created %+v, uniqueID %s; want the deployed VM %s configured",
			len(vms), condition(st, model.ConditionCreated), st.UniqueID, deployed.Value)
	}
	if cfg := vms[0].Config; cfg.Hardware.NumCPU != 2 || cfg.Hardware.MemoryMB != 4096 || cfg.InstanceUuid != v.instance || cfg.Version != "vmx-20" {
		t.Errorf("mended VM: %d CPUs, %d MB, instance UUID %s, %s; want 2, 4096, %s, vmx-20",
			cfg.Hardware.NumCPU, cfg.Hardware.MemoryMB, cfg.InstanceUuid, cfg.Version, v.instance)
	}
	h.publishSlice(v, st)
	res, err = r.reconcile(h.ctx, h.object(v.ref)) // the redelivery
	if err != nil {
		t.Fatal(err)
	}
	if again := statusOf(t, res); again.UniqueID != deployed.Value || !isTrue(again, model.ConditionCreated) {
		t.Errorf("redelivered reconcile: uniqueID %s, Created %+v; want %s reported again", again.UniqueID, condition(again, model.ConditionCreated), deployed.Value)
	}
	if n, m := len(calls.copiesOf(v.ref.Name)), len(calls.reconfiguresOf(v.ref.Name)); n != 1 || m != 1 {
		t.Errorf("%d deploys and %d landed reconfigures, want one of each", n, m)
	}
}

// What a VM template item cannot do is refused before anything is deployed: a linked
// clone (vCenter deploys library items in full) and a provisioning mode for the image's
// disks (the deploy copies them as they are). The fast-deploy direct mode is what it does.
func TestTemplateItemRefusals(t *testing.T) {
	h := newHarness(t)
	image := h.seedClassWithImage(inventory.PhotonVMTX)
	calls := h.recordCalls("vmtx-refused-")
	r := h.newTestReconciler()
	for _, tt := range []struct {
		name        string
		annotations map[string]any
		spec        map[string]any
		refusal     string // "" when the VM is made
	}{
		{"linked", map[string]any{model.AnnotationFastDeploy: "Linked"}, nil, "which makes a full copy; remove the annotation"},
		{"thin", nil, map[string]any{"advanced": map[string]any{"defaultVolumeProvisioningMode": "Thin"}}, "spec.advanced.defaultVolumeProvisioningMode Thin cannot apply"},
		{"direct", map[string]any{model.AnnotationFastDeploy: model.FastDeployModeDirect}, nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := newTestVM("vmtx-refused")
			v.image, v.annotations, v.spec = image, tt.annotations, tt.spec
			v.labels = map[string]any{model.LabelZone: "zone-a"}
			h.putVM(v, false)
			res, err := r.reconcile(h.ctx, h.object(v.ref))
			if err != nil {
				t.Fatal(err)
			}
			st := statusOf(t, res)
			c := condition(st, model.ConditionCreated)
			n := len(calls.copiesOf(v.ref.Name))
			if tt.refusal == "" {
				if c.Status != metav1.ConditionTrue || n != 1 {
					t.Errorf("Created %+v after %d deploys; want the VM deployed once", c, n)
				}
				return
			}
			if c.Status != metav1.ConditionFalse || c.Reason != model.ReasonInvalid || !strings.Contains(c.Message, tt.refusal) || n != 0 {
				t.Errorf("Created %+v after %d deploys; want False, %s, saying %q, and no deploy", c, n, model.ReasonInvalid, tt.refusal)
			}
		})
	}
}
