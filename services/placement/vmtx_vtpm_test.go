package placement

import (
	"context"
	"path"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vapi/library"
	vapi "github.com/vmware/govmomi/vapi/vcenter"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// A VM template item whose template has a vTPM: the deployed VM's copied vTPM is replaced
// by a new one in the configuring reconfigure for spec.crypto.vTPMMode New, kept for Clone.
func TestTemplateItemVTPM(t *testing.T) {
	h := newHarness(t)
	image := h.seedClassWithImage(inventory.PhotonVMTX)
	itemID := h.templateItemWithVTPM()
	img := deepCopy(t, seededObject(t, "VirtualMachineImage", testNamespace, image))
	img["metadata"].(map[string]any)["name"] = "vmi-vtpm"
	img["status"].(map[string]any)["providerItemID"] = itemID
	h.putObject(img)
	calls := h.recordCalls("vmtx-vtpm-")
	r := h.newTestReconciler()

	for _, mode := range []model.VTPMMode{model.VTPMModeNew, model.VTPMModeClone} {
		t.Run(string(mode), func(t *testing.T) {
			v := newTestVM("vmtx-vtpm")
			v.image = "vmi-vtpm"
			v.labels = map[string]any{model.LabelZone: "zone-a"}
			v.spec = map[string]any{"crypto": map[string]any{"vTPMMode": string(mode)}}
			h.putVM(v, false)
			res, err := r.reconcile(h.ctx, h.object(v.ref))
			if err != nil {
				t.Fatal(err)
			}
			if st := statusOf(t, res); !isTrue(st, model.ConditionCreated) {
				t.Fatalf("Created %+v", condition(st, model.ConditionCreated))
			}
			var ops []string
			for _, cs := range calls.reconfiguresOf(v.ref.Name) {
				for _, d := range cs.DeviceChange {
					if spec := d.GetVirtualDeviceConfigSpec(); isVTPM(spec.Device) {
						ops = append(ops, string(spec.Operation))
					}
				}
			}
			want := []string{"remove", "add"}
			if mode == model.VTPMModeClone {
				want = nil
			}
			if !slices.Equal(ops, want) {
				t.Errorf("vTPM changes %v, want %v", ops, want)
			}
			vms := h.vmsOf(v.uid)
			if len(vms) != 1 {
				t.Fatalf("%d VMs, want 1", len(vms))
			}
			n := 0
			for _, d := range vms[0].Config.Hardware.Device {
				if isVTPM(d) {
					n++
				}
			}
			if n != 1 {
				t.Errorf("the VM has %d vTPMs, want 1", n)
			}
		})
	}
}

func isVTPM(d types.BaseVirtualDevice) bool {
	_, ok := d.(*types.VirtualTPM)
	return ok
}

// seededObject is the seeded object kind namespace/name.
func seededObject(t *testing.T, kind, namespace, name string) map[string]any {
	t.Helper()
	for _, o := range seeded.objs {
		if meta, _ := o["metadata"].(map[string]any); o["kind"] == kind && meta["namespace"] == namespace && meta["name"] == name {
			return o
		}
	}
	t.Fatalf("no seeded %s %s/%s", kind, namespace, name)
	return nil
}

// templateItemWithVTPM makes a VM with a vTPM and a VM template item of it in the
// namespaces' library (its VM where the seed keeps those of VM template items), and returns
// the item's ID. Both stay, as the tests' VMs do: vcsim destroys an item's VM without
// waiting when the item is deleted, and its destroys race with one another.
func (h *harness) templateItemWithVTPM() string {
	h.t.Helper()
	finder := find.NewFinder(h.vc.Client)
	zone := inventory.Zones[0]
	pool, err := finder.ResourcePool(h.ctx, path.Join("/", inventory.Datacenter, "host", zone.Cluster, "Resources"))
	if err != nil {
		h.t.Fatal(err)
	}
	folder, err := finder.Folder(h.ctx, path.Join("/", inventory.Datacenter, "vm", inventory.LibraryTemplateFolder))
	if err != nil {
		h.t.Fatal(err)
	}
	name := "vtpm-source-" + uuid.NewString()[:8]
	task, err := folder.CreateVM(h.ctx, types.VirtualMachineConfigSpec{
		Name: name, GuestId: "vmwarePhoton64Guest", Firmware: "efi", NumCPUs: 1, MemoryMB: 1024,
		Files: &types.VirtualMachineFileInfo{VmPathName: "[" + inventory.SharedDatastore + "]"},
		DeviceChange: []types.BaseVirtualDeviceConfigSpec{&types.VirtualDeviceConfigSpec{
			Operation: types.VirtualDeviceConfigSpecOperationAdd, Device: &types.VirtualTPM{VirtualDevice: types.VirtualDevice{Key: -1}},
		}},
	}, pool, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	info, err := vcenter.WaitTask(h.ctx, task)
	if err != nil {
		h.t.Fatal(err)
	}
	source := object.NewVirtualMachine(h.vc.Client, info.Result.(types.ManagedObjectReference))
	rc, err := vcenter.LoginREST(h.ctx, h.vc, seeded.sim.URL.User)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { vcenter.Logout(context.Background(), rc) })
	libs, err := library.NewManager(rc).FindLibrary(h.ctx, library.Find{Name: inventory.Library.Name, Type: "LOCAL"})
	if err != nil || len(libs) != 1 {
		h.t.Fatalf("library %s: %v, %v", inventory.Library.Name, libs, err)
	}
	id, err := vapi.NewManager(rc).CreateTemplate(h.ctx, vapi.Template{
		Name: name + "-vmtx", Library: libs[0], SourceVM: source.Reference().Value,
		Placement: &vapi.Placement{Folder: folder.Reference().Value, ResourcePool: pool.Reference().Value},
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return id
}
