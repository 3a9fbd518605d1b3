package placement

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmware/govmomi/object"
	vapi "github.com/vmware/govmomi/vapi/vcenter"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// object is what the reconcile loop hands the service: the latest record and placement's
// newest slice of the same incarnation.
func (h *harness) object(ref events.Ref) reconcile.Object {
	h.t.Helper()
	rec, err := events.LastSpec(h.ctx, h.js, ref)
	if err != nil {
		h.t.Fatal(err)
	}
	o := reconcile.Object{Ref: ref, Spec: rec, Slices: map[string]events.Slice{}}
	var head struct{ Metadata reconcile.Meta }
	if err := json.Unmarshal(rec.Body, &head); err != nil {
		h.t.Fatal(err)
	}
	o.Meta = head.Metadata
	if st, err := events.LastStatus(h.ctx, h.js, ref, model.ServicePlacement); err == nil && st.Slice.UID == o.Meta.UID {
		o.Slices[model.ServicePlacement] = st.Slice
	}
	return o
}

// statusOf decodes a reconcile's result.
func statusOf(t *testing.T, res reconcile.Result) model.VirtualMachineStatus {
	t.Helper()
	b, err := json.Marshal(res.Status)
	if err != nil {
		t.Fatal(err)
	}
	var st model.VirtualMachineStatus
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// reconcileAfterLostSlices reconciles v three times as if none had published its slice (a
// crash lost each) and fails unless each reported Created with the one VM the first made.
func (h *harness) reconcileAfterLostSlices(r *reconciler, v testVM) {
	h.t.Helper()
	var ids []string
	for range 3 {
		o := h.object(v.ref)
		delete(o.Slices, model.ServicePlacement) // as if no slice had ever been published
		res, err := r.reconcile(h.ctx, o)
		if err != nil {
			h.t.Fatal(err)
		}
		st := statusOf(h.t, res)
		if !isTrue(st, model.ConditionCreated) {
			h.t.Fatalf("reconcile: Created = %+v", condition(st, model.ConditionCreated))
		}
		ids = append(ids, st.UniqueID)
	}
	if n := len(h.vmsOf(v.uid)); n != 1 || ids[0] != ids[1] || ids[1] != ids[2] {
		h.t.Errorf("%d VMs, uniqueIDs %v; want one VM reported each time", n, ids)
	}
}

// A reconcile repeated after a crash that lost its slice (the VM was made, the result never
// published) finds the VM instead of making another.
func TestRepeatedReconcileAdoptsVM(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	r := h.newTestReconciler()
	v := newTestVM("repeated-vm")
	v.labels = map[string]any{model.LabelZone: "zone-c"}
	h.putVM(v, false)

	h.reconcileAfterLostSlices(r, v)

	// A VM adopted by name is configured with its host's core clock, as its create would
	// have been (a class's CPU in cores is sized by it).
	vm := h.vmsOf(v.uid)[0]
	found, err := r.observe(h.ctx, vm.Self, false)
	if err != nil || found == nil {
		t.Fatalf("observe %s: %v", vm.Self.Value, err)
	}
	var host mo.HostSystem
	if err := object.NewHostSystem(h.vc.Client, *vm.Runtime.Host).Properties(h.ctx, *vm.Runtime.Host, []string{"summary.hardware"}, &host); err != nil {
		t.Fatal(err)
	}
	if mhz, err := r.coreMHz(h.ctx, found); err != nil || mhz == 0 || mhz != int64(host.Summary.Hardware.CpuMhz) {
		t.Errorf("coreMHz = %d, %v; want the host's %d", mhz, err, host.Summary.Hardware.CpuMhz)
	}
}

// A create recorded in the slice (Created False Creating) whose VM has not appeared is
// awaited, not repeated, until the grace runs out; a create still running in vCenter when
// placement restarts is found once it finishes.
func TestRecordedCreateIsAwaited(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	r := h.newTestReconciler()

	t.Run("running", func(t *testing.T) {
		v := newTestVM("inflight-vm")
		v.labels = map[string]any{model.LabelZone: "zone-a"}
		h.putVM(v, false)
		// The reconcile that "crashed": it recorded its create and issued it; vCenter is
		// still running it when the restarted placement reconciles.
		p := h.recordCreate(r, v)
		var wg sync.WaitGroup
		var deployErr error
		wg.Go(func() {
			_, deployErr = r.create(context.WithoutCancel(h.ctx), p.topo, vmIdentity{testNamespace, v.ref.Name, v.uid}, p.vm.Spec, p.cls, p.img, p.ch, cloneHow{})
		})

		waits := 0
		var st model.VirtualMachineStatus
		deadline := time.Now().Add(waitFor)
		for {
			res, err := r.reconcile(h.ctx, h.object(v.ref))
			if err == nil {
				st = statusOf(t, res)
				break
			}
			if !strings.Contains(err.Error(), "has not appeared yet") || time.Now().After(deadline) {
				t.Fatalf("reconcile while the create runs: %v", err)
			}
			waits++
			time.Sleep(pollEvery)
		}
		wg.Wait()
		if deployErr != nil {
			t.Fatal(deployErr)
		}
		t.Logf("the restarted reconcile waited %d times", waits)
		if n := len(h.vmsOf(v.uid)); n != 1 || !isTrue(st, model.ConditionCreated) {
			t.Errorf("%d VMs, Created %+v; want the one VM of the running create", n, condition(st, model.ConditionCreated))
		}
	})

	t.Run("lost", func(t *testing.T) {
		v := newTestVM("lost-create-vm")
		v.labels = map[string]any{model.LabelZone: "zone-a"}
		h.putVM(v, false)
		h.recordCreating(r, v)
		if _, err := r.reconcile(h.ctx, h.object(v.ref)); err == nil || !strings.Contains(err.Error(), "has not appeared yet") {
			t.Fatalf("reconcile within the grace: err = %v, want a wait", err)
		}
		if n := len(h.vmsOf(v.uid)); n != 0 {
			t.Fatalf("%d VMs while a recorded create may still run, want 0", n)
		}
		r.now = func() time.Time { return time.Now().Add(r.grace + time.Second) }
		defer func() { r.now = time.Now }()
		res, err := r.reconcile(h.ctx, h.object(v.ref))
		if err != nil {
			t.Fatal(err)
		}
		if st := statusOf(t, res); !isTrue(st, model.ConditionCreated) || len(h.vmsOf(v.uid)) != 1 {
			t.Errorf("after the grace: Created %+v, %d VMs; want the VM created once", condition(st, model.ConditionCreated), len(h.vmsOf(v.uid)))
		}
	})
}

// A VM found by its name in the namespace folder that vmop's create of the object cannot
// have made (no vmop keys, from an image whose create gives them) or that belongs to
// another object is left alone and reported.
func TestVMFoundByNameIsAdoptedOrRefused(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	r := h.newTestReconciler()
	topo, err := r.topology(h.ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	conds := newConditions(nil, 1, time.Now())
	img, err := r.resolveImage(h.ctx, testNamespace, &model.ImageRef{Kind: "VirtualMachineImage", Name: inventory.SeedImageName}, conds)
	if err != nil || img == nil {
		t.Fatalf("image: %v", err)
	}
	rm, err := r.readRoom(h.ctx, topo, seededPolicy(t))
	if err != nil {
		t.Fatal(err)
	}
	ch, err := r.place(h.ctx, topo, rm, []string{"zone-b"}, instanceNeed{})
	if err != nil {
		t.Fatal(err)
	}
	folder, err := r.namespaceFolder(h.ctx, topo, testNamespace, true)
	if err != nil {
		t.Fatal(err)
	}
	// halfMade deploys the image under name with no configuration, as a create that died
	// between the import and its configuration leaves it (ExtraConfig set when uid != "").
	halfMade := func(name, uid string) {
		t.Helper()
		d := vapi.Deploy{
			DeploymentSpec: vapi.DeploymentSpec{Name: name, DefaultDatastoreID: ch.datastore.ref.Value, AcceptAllEULA: true},
			Target:         vapi.Target{ResourcePoolID: ch.zone.pool.Value, FolderID: folder.Reference().Value},
		}
		if uid != "" {
			xmlSpec, err := configSpecXML(types.VirtualMachineConfigSpec{ExtraConfig: []types.BaseOptionValue{
				&types.OptionValue{Key: vcenter.KeyUID, Value: uid}}})
			if err != nil {
				t.Fatal(err)
			}
			d.VmConfigSpec = &vapi.VmConfigSpec{Provider: configSpecProvider, XML: xmlSpec}
		}
		if _, err := vapi.NewManager(r.vc.rest).DeployLibraryItem(h.ctx, img.itemID, d); err != nil {
			t.Fatal(err)
		}
	}

	// Only a VM template item's deploy leaves a VM without vmop's keys (its adoption:
	// TestTemplateItemDeployCutShortIsMended); with this image, a VM of the name without
	// them is someone else's: neither configured by the create nor destroyed by the delete.
	t.Run("without vmop's keys", func(t *testing.T) {
		v := newTestVM("unmarked-vm")
		v.labels = map[string]any{model.LabelZone: "zone-b"}
		halfMade(v.ref.Name, "")
		h.putVM(v, false)
		started := newConditions(nil, 1, time.Now().Add(-time.Hour))
		started.restart(model.ConditionCreated, "False", model.ReasonCreating, "creating")
		h.publishSlice(v, model.VirtualMachineStatus{Conditions: started.list()})
		if _, err := r.reconcile(h.ctx, h.object(v.ref)); !errors.Is(err, errForeignVM) || !strings.Contains(err.Error(), "not made by vmop") {
			t.Fatalf("reconcile: err = %v, want errForeignVM: not made by vmop", err)
		}
		if n := len(h.vmsOf(v.uid)); n != 0 {
			t.Errorf("%d VMs with the uid, want 0: the VM of the name was taken over", n)
		}
		h.putVM(v, true)
		res, err := r.reconcile(h.ctx, h.object(v.ref))
		if err != nil || !res.Released {
			t.Fatalf("deleting: %+v, %v; want released", res, err)
		}
		if !h.hasVMNamed(v.ref.Name) {
			t.Error("the VM of the name, not vmop's, was destroyed with the object")
		}
	})

	t.Run("foreign", func(t *testing.T) {
		v := newTestVM("taken-name-vm")
		v.labels = map[string]any{model.LabelZone: "zone-b"}
		halfMade(v.ref.Name, "another-object")
		h.putVM(v, false)
		// The first create runs into the name; the retry, knowing a create was attempted,
		// looks the name up and names its holder.
		if _, err := r.reconcile(h.ctx, h.object(v.ref)); err == nil {
			t.Fatal("first reconcile: created a VM under a name another VM holds")
		}
		_, err := r.reconcile(h.ctx, h.object(v.ref))
		if !errors.Is(err, errForeignVM) {
			t.Fatalf("reconcile: err = %v, want errForeignVM", err)
		}
		st := statusOf(t, reconcile.Result{Status: json.RawMessage(h.object(v.ref).Slices[model.ServicePlacement].Status)})
		if c := condition(st, model.ConditionCreated); c.Reason != model.ReasonError || !strings.Contains(c.Message, "another-object") {
			t.Errorf("Created = %+v, want Error naming the other object", c)
		}
		if n := len(h.vmsOf(v.uid)); n != 0 {
			t.Errorf("%d VMs with the uid, want 0 (the name is taken)", n)
		}
	})
}

// recordCreating publishes v's slice with Created False Creating, as a reconcile does
// before it issues the create: what a crash right after leaves behind.
func (h *harness) recordCreating(r *reconciler, v testVM) *conditions {
	h.t.Helper()
	conds := newConditions(nil, 1, time.Now())
	conds.restart(model.ConditionCreated, metav1.ConditionFalse, model.ReasonCreating, "creating")
	if err := r.publish(h.ctx, h.object(v.ref), &model.VirtualMachineStatus{}, conds); err != nil {
		h.t.Fatal(err)
	}
	return conds
}

// plannedCreate is what a reconcile resolved and chose for a VM's create.
type plannedCreate struct {
	vm   model.VirtualMachine
	cls  *class
	img  *image
	topo *topology
	ch   choice
}

// recordCreate resolves v's class and image, places it in zone-a and records its create
// (recordCreating): the state of a reconcile that crashed while creating v.
func (h *harness) recordCreate(r *reconciler, v testVM) plannedCreate {
	h.t.Helper()
	conds := h.recordCreating(r, v)
	var p plannedCreate
	if err := json.Unmarshal(h.object(v.ref).Spec.Body, &p.vm); err != nil {
		h.t.Fatal(err)
	}
	var err error
	if p.cls, err = r.resolveClass(h.ctx, testNamespace, v.className, conds); err != nil || p.cls == nil {
		h.t.Fatalf("class: %v", err)
	}
	if p.img, err = r.resolveImage(h.ctx, testNamespace, p.vm.Spec.Image, conds); err != nil || p.img == nil {
		h.t.Fatalf("image: %v", err)
	}
	if p.topo, err = r.topology(h.ctx, false); err != nil {
		h.t.Fatal(err)
	}
	rm, err := r.readRoom(h.ctx, p.topo, seededPolicy(h.t))
	if err != nil {
		h.t.Fatal(err)
	}
	if p.ch, err = r.place(h.ctx, p.topo, rm, []string{"zone-a"}, instanceNeed{}); err != nil {
		h.t.Fatal(err)
	}
	return p
}
