package placement

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// A VM from an image of type VM is a clone of its template VM: vcsim shows a powered-off
// VM (not a template) in the namespace folder with the class's CPU and memory, the spec's
// UUIDs, the keys naming the object and the template's two disks. The clone is linked (on
// the template's snapshot) by default and full with fast-deploy direct; the home and
// every disk get the storage class's policy on the chosen datastore; a minHardwareVersion
// above the template's is reached by upgrading the clone (vcsim keeps no
// record of a policy nor of a disk's parent: look at the CloneVM_Task call itself).
func TestClonesVMImage(t *testing.T) {
	h := newHarness(t)
	image := h.seedClassWithImage(inventory.PhotonTemplate)
	var mu sync.Mutex
	clones := map[string]types.VirtualMachineCloneSpec{}
	seeded.sim.Intercept(func(_ *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault) {
		if req, ok := m.Body.(*types.CloneVM_Task); ok && strings.HasPrefix(req.Name, "clone-") {
			mu.Lock()
			clones[req.Name] = req.Spec
			mu.Unlock()
		}
		return nil, nil
	})
	t.Cleanup(func() { seeded.sim.Intercept(nil) })
	h.runService()

	template, err := find.NewFinder(h.vc.Client).VirtualMachine(h.ctx, "/"+inventory.Datacenter+"/vm/"+inventory.TemplateFolder+"/"+inventory.PhotonTemplate)
	if err != nil {
		t.Fatal(err)
	}
	var tm mo.VirtualMachine
	if err := template.Properties(h.ctx, template.Reference(), []string{"snapshot"}, &tm); err != nil {
		t.Fatal(err)
	}
	policy := seededPolicy(t).id

	for _, tt := range []struct {
		mode     string // the fast-deploy annotation, "" for none
		minHW    int32  // spec.minHardwareVersion, 0 for none
		moveType types.VirtualMachineRelocateDiskMoveOptions
		snapshot *types.ManagedObjectReference
	}{
		{"", 0, types.VirtualMachineRelocateDiskMoveOptionsCreateNewChildDiskBacking, tm.Snapshot.CurrentSnapshot},
		{model.FastDeployModeDirect, 0, types.VirtualMachineRelocateDiskMoveOptionsMoveAllDiskBackingsAndDisallowSharing, nil},
		{model.FastDeployModeLinked, 20, types.VirtualMachineRelocateDiskMoveOptionsCreateNewChildDiskBacking, tm.Snapshot.CurrentSnapshot},
	} {
		t.Run(fmt.Sprintf("mode=%s,minHardwareVersion=%d", tt.mode, tt.minHW), func(t *testing.T) {
			v := newTestVM("clone")
			v.image = image
			if tt.mode != "" {
				v.annotations = map[string]any{model.AnnotationFastDeploy: tt.mode}
			}
			obj := v.object(1, false)
			wantHW := int32(19) // the template's
			if tt.minHW > 0 {
				obj["spec"].(map[string]any)["minHardwareVersion"] = tt.minHW
				wantHW = tt.minHW
			}
			h.append(v.ref, obj)
			_, st := h.waitSlice(v.ref, "created", created)
			vm := h.onlyVMOf(v.uid)
			cfg := vm.Config
			disks := diskGiB(cfg.Hardware.Device)
			got := map[string]any{
				"template": cfg.Template, "power": vm.Runtime.PowerState, "cpus": cfg.Hardware.NumCPU, "memoryMB": cfg.Hardware.MemoryMB,
				"biosUUID": cfg.Uuid, "instanceUUID": cfg.InstanceUuid, "object": extraConfig(vm, vcenter.KeyObject),
				"disksGiB": disks, "version": cfg.Version, "folder": h.folderName(vm),
			}
			want := map[string]any{
				"template": false, "power": types.VirtualMachinePowerStatePoweredOff, "cpus": int32(2), "memoryMB": int32(4096),
				"biosUUID": v.bios, "instanceUUID": v.instance, "object": testNamespace + "/" + v.ref.Name,
				"disksGiB": []int64{20, 10}, "version": fmt.Sprintf("vmx-%d", wantHW), "folder": testNamespace,
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("clone in vcsim (-want +got):\n%s", d)
			}
			if st.UniqueID != vm.Self.Value {
				t.Errorf("status uniqueID %s, want %s", st.UniqueID, vm.Self.Value)
			}

			mu.Lock()
			spec, ok := clones[v.ref.Name]
			mu.Unlock()
			if !ok {
				t.Fatal("no CloneVM_Task seen")
			}
			loc := spec.Location
			if loc.DiskMoveType != string(tt.moveType) || !cmp.Equal(spec.Snapshot, tt.snapshot) || spec.PowerOn || spec.Template {
				t.Errorf("clone: diskMoveType %s, snapshot %v, powerOn %v, template %v; want %s, %v, off, no template",
					loc.DiskMoveType, spec.Snapshot, spec.PowerOn, spec.Template, tt.moveType, tt.snapshot)
			}
			if len(loc.Profile) != 1 || loc.Profile[0].(*types.VirtualMachineDefinedProfileSpec).ProfileId != policy || len(loc.Disk) != 2 {
				t.Fatalf("clone location: profile %#v, %d disk locators; want %s and 2", loc.Profile, len(loc.Disk), policy)
			}
			for _, d := range loc.Disk {
				if d.Datastore != *loc.Datastore || d.Profile[0].(*types.VirtualMachineDefinedProfileSpec).ProfileId != policy || d.DiskMoveType != string(tt.moveType) {
					t.Errorf("disk locator %+v: want datastore %s, policy %s, %s", d, loc.Datastore.Value, policy, tt.moveType)
				}
			}
		})
	}
}

// folderName is the name of the VM's parent folder.
func (h *harness) folderName(vm mo.VirtualMachine) string {
	h.t.Helper()
	if vm.Parent == nil {
		return ""
	}
	var f mo.Folder
	if err := h.vc.RetrieveOne(h.ctx, *vm.Parent, []string{"name"}, &f); err != nil {
		h.t.Fatal(err)
	}
	return f.Name
}

// A clone's reconcile repeated after a crash that lost its slice finds the clone by the
// instance UUID it was made with instead of cloning again.
func TestRepeatedReconcileAdoptsClone(t *testing.T) {
	h := newHarness(t)
	image := h.seedClassWithImage(inventory.PhotonTemplate)
	r := h.newTestReconciler()
	v := newTestVM("repeated-clone")
	v.image = image
	h.putVM(v, false)

	h.reconcileAfterLostSlices(r, v)
}

// A clone found again before it was reported created, below the hardware version its
// create asks for (a crash cut its UpgradeVM_Task off), is upgraded then: power would
// raise it only to spec.minHardwareVersion, not to a class's version.
func TestCloneFoundBeforeItsUpgradeIsUpgraded(t *testing.T) {
	h := newHarness(t)
	image := h.seedClassWithImage(inventory.PhotonTemplate)
	r := h.newTestReconciler()
	v := newTestVM("cut-upgrade")
	v.image = image
	h.putVM(v, false) // cloned at the template's vmx-19
	if _, err := r.reconcile(h.ctx, h.object(v.ref)); err != nil {
		t.Fatal(err)
	}
	obj := v.object(1, false)
	obj["spec"].(map[string]any)["minHardwareVersion"] = 20
	h.append(v.ref, obj)
	o := h.object(v.ref)
	delete(o.Slices, model.ServicePlacement) // the create was never reported
	res, err := r.reconcile(h.ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if st := statusOf(t, res); !isTrue(st, model.ConditionCreated) {
		t.Fatalf("Created = %+v", condition(st, model.ConditionCreated))
	}
	vms := h.vmsOf(v.uid)
	if len(vms) != 1 || vms[0].Config.Version != "vmx-20" {
		t.Fatalf("%d VMs; want one at vmx-20, got %v", len(vms), vms)
	}
}

// A template's vTPM is copied for vTPMMode Clone and replaced for New; a template without
// one gets no policy (vcsim takes the policy and ignores it: the spec is what is checked).
func TestTPMProvisionPolicy(t *testing.T) {
	withTPM := []types.BaseVirtualDevice{&types.VirtualTPM{}}
	for _, tt := range []struct {
		devices []types.BaseVirtualDevice
		mode    model.VTPMMode
		want    string
	}{
		{withTPM, model.VTPMModeClone, "copy"},
		{withTPM, model.VTPMModeNew, "replace"},
		{nil, model.VTPMModeClone, ""},
	} {
		if got := tpmProvisionPolicy(tt.devices, tt.mode); got != tt.want {
			t.Errorf("%d devices, %s: policy %q, want %q", len(tt.devices), tt.mode, got, tt.want)
		}
	}
	vm := &model.VirtualMachine{Spec: model.VirtualMachineSpec{Crypto: &model.VirtualMachineCryptoSpec{VTPMMode: model.VTPMModeClone}}}
	if how := cloneHowOf(vm); !how.linked || how.vTPM != model.VTPMModeClone {
		t.Errorf("cloneHowOf = %+v, want linked, Clone", how)
	}
	if how := cloneHowOf(&model.VirtualMachine{}); how.vTPM != model.VTPMModeNew {
		t.Errorf("cloneHowOf without spec.crypto = %+v, want vTPM New", how)
	}
}

// An image whose status names no type VMs are made from (a damaged status: the inventory
// publishes OVF, ISO and VM images only) is refused with the reason, and nothing is created.
func TestImageOfNoDeployableTypeIsRefused(t *testing.T) {
	h := newHarness(t)
	h.seedObject("VirtualMachineClass", testNamespace, inventory.SeedClassName, "")
	h.seedObject("StorageClass", "", testStorageClass, "")
	var img map[string]any
	for _, o := range seeded.objs {
		if status, _ := o["status"].(map[string]any); o["kind"] == "VirtualMachineImage" && status["name"] == inventory.PhotonTemplate {
			img = deepCopy(t, o)
			break
		}
	}
	img["metadata"] = map[string]any{"name": "vmi-damaged", "namespace": testNamespace}
	img["status"].(map[string]any)["type"] = "Folder"
	h.putObject(img)
	h.runService()

	v := newTestVM("damaged")
	v.image = "vmi-damaged"
	h.putVM(v, false)
	_, st := h.waitSlice(v.ref, "ImageReady Invalid", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		return condition(st, model.ConditionImageReady).Reason == model.ReasonInvalid
	})
	if c := condition(st, model.ConditionImageReady); !strings.Contains(c.Message, "names no deployable type") {
		t.Errorf("ImageReady message %q does not say why", c.Message)
	}
	if n := len(h.vmsOf(v.uid)); n != 0 {
		t.Errorf("%d VMs for a refused image, want 0", n)
	}
}
