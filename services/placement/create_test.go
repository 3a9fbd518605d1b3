package placement

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// The seed document's VM (my-vm-class, the photon image) becomes a powered-off VM in
// vcsim with the class's 2 CPUs, 4 GiB and allocations, the spec's UUIDs and the keys
// naming the object; placement chose a zone, labelled the object once and reports where
// the VM is.
func TestCreatesVMFromImageAndClass(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	h.runService()

	v := newTestVM("create-vm")
	seq := h.putVM(v, false)
	start := time.Now()
	_, st := h.waitSlice(v.ref, "created", created)
	t.Logf("created in %v", time.Since(start))

	vms := h.vmsOf(v.uid)
	if len(vms) != 1 {
		t.Fatalf("%d VMs carry uid %s, want 1", len(vms), v.uid)
	}
	vm := vms[0]
	cfg := vm.Config
	gotVM := map[string]any{
		"name": vm.Name, "cpus": cfg.Hardware.NumCPU, "memoryMB": cfg.Hardware.MemoryMB,
		"biosUUID": cfg.Uuid, "instanceUUID": cfg.InstanceUuid, "power": vm.Runtime.PowerState,
		"cpuReservation": *cfg.CpuAllocation.Reservation, "cpuLimit": *cfg.CpuAllocation.Limit,
		"memReservation": *cfg.MemoryAllocation.Reservation, "memLimit": *cfg.MemoryAllocation.Limit,
		"object": extraConfig(vm, vcenter.KeyObject), "version": cfg.Version,
	}
	wantVM := map[string]any{
		"name": v.ref.Name, "cpus": int32(2), "memoryMB": int32(4096),
		"biosUUID": v.bios, "instanceUUID": v.instance, "power": types.VirtualMachinePowerStatePoweredOff,
		"cpuReservation": int64(200), "cpuLimit": int64(400), "memReservation": int64(1024), "memLimit": int64(2048),
		"object": testNamespace + "/" + v.ref.Name, "version": "vmx-19",
	}
	if d := cmp.Diff(wantVM, gotVM); d != "" {
		t.Errorf("VM in vcsim (-want +got):\n%s", d)
	}

	zone := zoneOf(t, st.Zone)
	wantSt := model.VirtualMachineStatus{
		UniqueID: vm.Self.Value, Zone: zone.Name, BiosUUID: v.bios, InstanceUUID: v.instance,
		Class: &model.LocalObjectRef{APIVersion: "vmoperator.vmware.com/v1alpha5", Kind: "VirtualMachineClass", Name: inventory.SeedClassName},
	}
	if d := cmp.Diff(wantSt, st, cmpopts.IgnoreFields(model.VirtualMachineStatus{}, "NodeName", "Provider", "Conditions")); d != "" {
		t.Errorf("status (-want +got):\n%s", d)
	}
	if !slices.Contains(zone.Hosts, st.NodeName) || st.NodeName != hostName(t, h, *vm.Runtime.Host) {
		t.Errorf("nodeName %q: want the VM's host, one of zone %s's %v", st.NodeName, zone.Name, zone.Hosts)
	}
	if st.Provider == nil || st.Provider.CreationTimestamp == nil || time.Since(st.Provider.CreationTimestamp.Time) > time.Minute {
		t.Errorf("provider.creationTimestamp = %+v, want the VM's recent createDate", st.Provider)
	}
	for _, typ := range []string{model.ConditionClassReady, model.ConditionImageReady, model.ConditionPlacementReady, model.ConditionCreated} {
		if c := condition(st, typ); c.Status != metav1.ConditionTrue || c.Reason != model.ReasonTrue || c.ObservedGeneration != 1 {
			t.Errorf("condition %s = %+v, want True, reason True, observed generation 1", typ, c)
		}
	}

	// The zone label was appended once, on the record placement reconciled, with the
	// generation unchanged.
	rec, err := events.LastSpec(h.ctx, h.js, v.ref)
	if err != nil {
		t.Fatal(err)
	}
	var stored model.VirtualMachine
	if err := json.Unmarshal(rec.Body, &stored); err != nil {
		t.Fatal(err)
	}
	if rec.Seq <= seq || stored.Labels[model.LabelZone] != st.Zone || stored.Generation != 1 || stored.Spec.InstanceUUID != v.instance {
		t.Errorf("latest record seq %d (VM's %d): zone label %q, generation %d, instanceUUID %s; want a later record labelled %q, generation 1, spec kept",
			rec.Seq, seq, stored.Labels[model.LabelZone], stored.Generation, stored.Spec.InstanceUUID, st.Zone)
	}
	h.waitProcessed(rec.Seq)
	if again, err := events.LastSpec(h.ctx, h.js, v.ref); err != nil || again.Seq != rec.Seq {
		t.Errorf("after the labelled record was reconciled the latest record is %d (err %v), want %d: the label is set once", again.Seq, err, rec.Seq)
	}
}

// A VM labelled with a zone is placed in that zone's cluster and its record is left alone.
func TestHonoursZoneLabel(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	h.runService()

	v := newTestVM("zoned-vm")
	v.labels = map[string]any{model.LabelZone: "zone-b"}
	seq := h.putVM(v, false)
	_, st := h.waitSlice(v.ref, "created", created)
	zone := zoneOf(t, "zone-b")
	if st.Zone != "zone-b" || !slices.Contains(zone.Hosts, st.NodeName) {
		t.Errorf("zone %q, node %q; want zone-b and one of %v", st.Zone, st.NodeName, zone.Hosts)
	}
	h.waitProcessed(seq)
	if rec, err := events.LastSpec(h.ctx, h.js, v.ref); err != nil || rec.Seq != seq {
		t.Errorf("latest record %d (err %v), want the VM's own %d: a labelled VM is not relabelled", rec.Seq, err, seq)
	}
}

// A redelivered or repeated spec makes no second VM: the reconcile finds the first by its
// instance UUID.
func TestRedeliveredSpecCreatesOneVM(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	h.runService()

	v := newTestVM("redelivered-vm")
	h.putVM(v, false)
	_, first := h.waitSlice(v.ref, "created", created)
	rec, err := events.LastSpec(h.ctx, h.js, v.ref)
	if err != nil {
		t.Fatal(err)
	}
	// The same record again, twice, as a redelivery or a client's repeated PUT would.
	var last uint64
	for range 2 {
		last, err = events.AppendSpec(h.ctx, h.js, v.ref, events.OpPut, rec.Body, mustLastSeq(t, h, v.ref), nil)
		if err != nil {
			t.Fatal(err)
		}
	}
	h.waitProcessed(last)
	if n := len(h.vmsOf(v.uid)); n != 1 {
		t.Errorf("%d VMs after the repeated records, want 1", n)
	}
	_, again := h.waitSlice(v.ref, "created", created)
	if again.UniqueID != first.UniqueID {
		t.Errorf("uniqueID %s after the repeats, want %s", again.UniqueID, first.UniqueID)
	}
}

func mustLastSeq(t *testing.T, h *harness, ref events.Ref) uint64 {
	t.Helper()
	rec, err := events.LastSpec(h.ctx, h.js, ref)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Seq
}

// A VM whose class or image does not exist says so and is created once it appears.
func TestMissingClassOrImageThenAppears(t *testing.T) {
	tests := []struct {
		name      string
		vm        func(*testVM)
		condition string
		reason    string
		message   string
		appear    func(*harness)
	}{{
		name:      "class",
		vm:        func(v *testVM) { v.className = "late-class" },
		condition: model.ConditionClassReady, reason: model.ReasonNotFound,
		message: "VirtualMachineClass late-class not found in namespace my-namespace",
		appear: func(h *harness) {
			h.seedObject("VirtualMachineClass", testNamespace, inventory.SeedClassName, "late-class")
		},
	}, {
		name:      "image",
		vm:        func(v *testVM) { v.image = "vmi-late" },
		condition: model.ConditionImageReady, reason: model.ReasonNotFound,
		message: "VirtualMachineImage vmi-late not found in namespace my-namespace",
		appear: func(h *harness) {
			h.seedObject("VirtualMachineImage", testNamespace, inventory.SeedImageName, "vmi-late")
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.seedClassAndImage()
			h.runService()

			v := newTestVM("missing-" + tc.name)
			tc.vm(&v)
			h.putVM(v, false)
			_, st := h.waitSlice(v.ref, "waiting", func(_ events.Slice, st model.VirtualMachineStatus) bool {
				return condition(st, tc.condition).Status == metav1.ConditionFalse
			})
			if c := condition(st, tc.condition); c.Reason != tc.reason || c.Message != tc.message {
				t.Errorf("%s = %s %q, want %s %q", tc.condition, c.Reason, c.Message, tc.reason, tc.message)
			}
			if c := condition(st, model.ConditionCreated); c.Status != metav1.ConditionFalse || c.Reason != model.ReasonNotReady {
				t.Errorf("%s = %+v, want False NotReady", model.ConditionCreated, c)
			}
			if n := len(h.vmsOf(v.uid)); n != 0 {
				t.Errorf("%d VMs while the %s is missing, want 0", n, tc.name)
			}

			tc.appear(h)
			_, st = h.waitSlice(v.ref, "created", created)
			if !isTrue(st, tc.condition) || len(h.vmsOf(v.uid)) != 1 {
				t.Errorf("after the %s appeared: %s %+v, %d VMs; want True and 1 VM",
					tc.name, tc.condition, condition(st, tc.condition), len(h.vmsOf(v.uid)))
			}
		})
	}
}

func zoneOf(t *testing.T, name string) inventory.Zone {
	t.Helper()
	for _, z := range inventory.Zones {
		if z.Name == name {
			return z
		}
	}
	t.Fatalf("zone %q is none of %v", name, inventory.Zones)
	return inventory.Zone{}
}

func hostName(t *testing.T, h *harness, ref types.ManagedObjectReference) string {
	t.Helper()
	var host mo.HostSystem
	if err := h.vc.RetrieveOne(h.ctx, ref, []string{"name"}, &host); err != nil {
		t.Fatal(err)
	}
	return host.Name
}

// A VM whose image is an ISO is created empty (storage attaches the ISO as a CD-ROM) with
// the class hardware and the spec's guest ID.
func TestCreatesEmptyVMForISOImage(t *testing.T) {
	h := newHarness(t)
	iso := h.seedClassWithImage(inventory.PhotonISO)
	// vcsim keeps no record of a VM's storage policy: look at the create itself.
	profiles := make(chan []types.BaseVirtualMachineProfileSpec, 1)
	seeded.sim.Intercept(func(_ *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault) {
		if req, ok := m.Body.(*types.CreateVM_Task); ok && strings.HasPrefix(req.Config.Name, "iso-vm-") {
			select {
			case profiles <- req.Config.VmProfile:
			default:
			}
		}
		return nil, nil
	})
	t.Cleanup(func() { seeded.sim.Intercept(nil) })
	h.runService()

	v := newTestVM("iso-vm")
	v.image = iso
	obj := v.object(1, false)
	obj["spec"].(map[string]any)["guestID"] = "vmwarePhoton64Guest"
	h.append(v.ref, obj)
	_, st := h.waitSlice(v.ref, "created", created)
	vms := h.vmsOf(v.uid)
	if len(vms) != 1 {
		t.Fatalf("%d VMs, want 1", len(vms))
	}
	cfg := vms[0].Config
	disks := 0
	for _, d := range cfg.Hardware.Device {
		if _, ok := d.(*types.VirtualDisk); ok {
			disks++
		}
	}
	if cfg.Hardware.NumCPU != 2 || cfg.Hardware.MemoryMB != 4096 || cfg.GuestId != "vmwarePhoton64Guest" || disks != 0 ||
		cfg.InstanceUuid != v.instance || st.InstanceUUID != v.instance {
		t.Errorf("ISO VM: %d CPUs, %d MB, guest %s, %d disks, instance %s (status %s); want 2, 4096, vmwarePhoton64Guest, 0, %s",
			cfg.Hardware.NumCPU, cfg.Hardware.MemoryMB, cfg.GuestId, disks, cfg.InstanceUuid, st.InstanceUUID, v.instance)
	}
	want := seededPolicy(t).id
	select {
	case got := <-profiles:
		if len(got) != 1 || got[0].(*types.VirtualMachineDefinedProfileSpec).ProfileId != want {
			t.Errorf("CreateVM's VmProfile = %#v, want the storage class's policy %s", got, want)
		}
	default:
		t.Error("no CreateVM call seen")
	}
	if c := condition(st, model.ConditionPlacementReady); !strings.Contains(c.Message, want) {
		t.Errorf("PlacementReady = %+v, want the storage policy %s named", c, want)
	}
}

// imageNamed is the object name of the seeded image with a display name in namespace.
func imageNamed(t *testing.T, namespace, displayName string) string {
	t.Helper()
	for _, o := range seeded.objs {
		meta, _ := o["metadata"].(map[string]any)
		status, _ := o["status"].(map[string]any)
		if o["kind"] == "VirtualMachineImage" && meta["namespace"] == namespace && status["name"] == displayName {
			return meta["name"].(string)
		}
	}
	t.Fatalf("no seeded image %s in %s", displayName, namespace)
	return ""
}

// A create that vCenter refuses shows as Created False Error with vCenter's message (and
// is retried with backoff).
func TestCreateFailureIsReported(t *testing.T) {
	h := newHarness(t)
	h.seedObject("VirtualMachineClass", testNamespace, inventory.SeedClassName, "")
	h.seedObject("StorageClass", "", testStorageClass, "")
	for _, o := range seeded.objs {
		if meta, _ := o["metadata"].(map[string]any); o["kind"] == "VirtualMachineImage" && meta["namespace"] == testNamespace && meta["name"] == inventory.SeedImageName {
			broken := deepCopy(t, o)
			broken["metadata"].(map[string]any)["name"] = "vmi-broken"
			broken["status"].(map[string]any)["providerItemID"] = "00000000-0000-4000-8000-000000000000"
			h.putObject(broken)
		}
	}
	h.runService()

	v := newTestVM("failing-vm")
	v.image = "vmi-broken"
	h.putVM(v, false)
	_, st := h.waitSlice(v.ref, "create failed", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		return condition(st, model.ConditionCreated).Reason == model.ReasonError
	})
	if c := condition(st, model.ConditionCreated); c.Status != metav1.ConditionFalse ||
		!strings.Contains(c.Message, "deploy VirtualMachineImage vmi-broken (library item 00000000-0000-4000-8000-000000000000)") {
		t.Errorf("Created = %+v, want False Error naming the failed deploy", c)
	}
	if n := len(h.vmsOf(v.uid)); n != 0 {
		t.Errorf("%d VMs after a failed create, want 0", n)
	}
}

// A VM naming a VirtualMachineSetResourcePolicy (spec.reserved.resourcePolicyName) that
// cannot be fetched is not created, as in VM Operator, and the condition says why; vmop
// serves no such kind, so the name is never silently passed over.
func TestResourcePolicyNotFound(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	h.runService()

	v := newTestVM("policy-vm")
	v.spec = map[string]any{"reserved": map[string]any{"resourcePolicyName": "my-resource-policy"}}
	h.putVM(v, false)
	_, st := h.waitSlice(v.ref, "ResourcePolicyReady NotFound", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		return condition(st, model.ConditionResourcePolicyReady).Reason == model.ReasonNotFound
	})
	if c := condition(st, model.ConditionResourcePolicyReady); c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, `"my-resource-policy" not found`) {
		t.Errorf("ResourcePolicyReady = %+v, want False NotFound naming the policy", c)
	}
	if c := condition(st, model.ConditionCreated); c.Status != metav1.ConditionFalse {
		t.Errorf("Created = %+v, want False", c)
	}
	if n := len(h.vmsOf(v.uid)); n != 0 {
		t.Errorf("%d VMs for a VM whose resource policy cannot be fetched, want 0", n)
	}
}
