package placement

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

const (
	testNamespace    = "my-namespace"
	testStorageClass = "my-storage-class"
	waitFor          = 30 * time.Second
	pollEvery        = 10 * time.Millisecond // poll interval of deadline-bounded waits
)

// harness is one test's world: its own NATS with vmop's streams, the shared seeded vcsim,
// and a vCenter client to look at what the service did there.
type harness struct {
	t   *testing.T
	ctx context.Context
	js  jetstream.JetStream
	vc  *govmomi.Client
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*waitFor)
	t.Cleanup(cancel)
	js, _ := eventstest.JetStream(t)
	vc, err := seeded.sim.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = vc.Logout(context.Background()) })
	return &harness{t: t, ctx: ctx, js: js, vc: vc}
}

// seedClassAndImage appends the seed document's class and image and the test storage class
// to the test's SPECS, as the gateway's seed does.
func (h *harness) seedClassAndImage() { h.seedClassWithImage(inventory.PhotonImage) }

// seedClassWithImage appends the seed document's class, the seeded image of displayName in
// testNamespace and the test storage class to the test's SPECS, and returns the image's
// object name.
func (h *harness) seedClassWithImage(displayName string) string {
	image := imageNamed(h.t, testNamespace, displayName)
	h.seedObject("VirtualMachineClass", testNamespace, inventory.SeedClassName, "")
	h.seedObject("VirtualMachineImage", testNamespace, image, "")
	h.seedObject("StorageClass", "", testStorageClass, "")
	return image
}

// runService runs the placement service until the test ends.
func (h *harness) runService() {
	ctx, cancel := context.WithCancel(h.ctx)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{JetStream: h.js, VCenter: seeded.sim.Endpoint(), Logger: testLogger()})
	}()
	h.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			h.t.Errorf("Run: %v", err)
		}
	})
}

func testLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}

// newTestReconciler is the service's reconciler without its loop, for tests that drive
// reconciles themselves.
func (h *harness) newTestReconciler() *reconciler {
	vc, err := openSession(h.ctx, seeded.sim.Endpoint())
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(vc.close)
	return newReconciler(h.js, vc)
}

// seedObject appends the seeded object of kind/namespace/name, renamed to as when as is
// not "", the way the gateway stores it; its status (an image's) is published as the
// storage service's slice, where the gateway's seed puts it.
func (h *harness) seedObject(kind, namespace, name, as string) events.Ref {
	h.t.Helper()
	for _, o := range seeded.objs {
		meta, _ := o["metadata"].(map[string]any)
		if o["kind"] != kind || meta["name"] != name || (meta["namespace"] != nil && meta["namespace"] != namespace) {
			continue
		}
		obj := deepCopy(h.t, o)
		if as != "" {
			obj["metadata"].(map[string]any)["name"] = as
		}
		return h.putObject(obj)
	}
	h.t.Fatalf("no seeded %s %s/%s", kind, namespace, name)
	return events.Ref{}
}

// putObject appends obj as a new object: uid, generation 1 and creationTimestamp set,
// status left out of SPECS and published as the storage service's slice.
func (h *harness) putObject(obj map[string]any) events.Ref {
	h.t.Helper()
	k, ok := kindOf(obj)
	if !ok {
		h.t.Fatalf("unknown kind %v", obj["kind"])
	}
	meta := obj["metadata"].(map[string]any)
	ref := events.Ref{Plural: k.Plural, Name: meta["name"].(string)}
	if k.Namespaced {
		ref.Namespace, _ = meta["namespace"].(string)
	}
	uid := uuid.NewString()
	meta["uid"], meta["generation"] = uid, 1
	meta["creationTimestamp"] = time.Now().UTC().Format(time.RFC3339)
	status, hasStatus := obj["status"]
	delete(obj, "status")
	h.append(ref, obj)
	if hasStatus {
		body, err := json.Marshal(status)
		if err != nil {
			h.t.Fatal(err)
		}
		if _, err := events.PublishStatus(h.ctx, h.js, ref, events.Slice{
			Service: model.ServiceStorage, UID: uid, Generation: 1, Status: body}); err != nil {
			h.t.Fatal(err)
		}
	}
	return ref
}

// publishSlice publishes st as placement's slice of v's first generation, as a reconcile
// of it would have.
func (h *harness) publishSlice(v testVM, st model.VirtualMachineStatus) {
	h.t.Helper()
	body, err := json.Marshal(st)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := events.PublishStatus(h.ctx, h.js, v.ref, events.Slice{Service: model.ServicePlacement, UID: v.uid, Generation: 1, Status: body}); err != nil {
		h.t.Fatal(err)
	}
}

// append stores obj as ref's newest record (compare-and-swap on the current one).
func (h *harness) append(ref events.Ref, obj map[string]any) uint64 {
	h.t.Helper()
	var last uint64
	rec, err := events.LastSpec(h.ctx, h.js, ref)
	switch {
	case err == nil:
		last = rec.Seq
	case !errors.Is(err, events.ErrNotFound):
		h.t.Fatal(err)
	}
	body, err := json.Marshal(obj)
	if err != nil {
		h.t.Fatal(err)
	}
	seq, err := events.AppendSpec(h.ctx, h.js, ref, events.OpPut, body, last, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	return seq
}

func kindOf(obj map[string]any) (model.Kind, bool) {
	for _, k := range model.Kinds() {
		if k.APIVersion() == obj["apiVersion"] && k.Kind == obj["kind"] {
			return k, true
		}
	}
	return model.Kind{}, false
}

func deepCopy(t *testing.T, o map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// testVM is a VirtualMachine the test created.
type testVM struct {
	ref                 events.Ref
	uid, bios, instance string
	className, image    string
	labels, annotations map[string]any
	spec                map[string]any // more spec fields (groupName, affinity)
}

// vmObject is the VM as the gateway stores it after admission: the seed document's
// example, with the defaults admission fills in (UUIDs, spec.image, power state).
func (v testVM) object(generation int64, deleting bool) map[string]any {
	meta := map[string]any{"name": v.ref.Name, "namespace": v.ref.Namespace, "uid": v.uid, "generation": generation,
		"creationTimestamp": "2026-01-01T00:00:00Z"}
	if len(v.labels) > 0 {
		meta["labels"] = v.labels
	}
	if len(v.annotations) > 0 {
		meta["annotations"] = v.annotations
	}
	if deleting {
		meta["deletionTimestamp"] = time.Now().UTC().Format(time.RFC3339)
		meta["finalizers"] = []any{model.FinalizerVirtualMachine}
	}
	spec := map[string]any{
		"className": v.className, "imageName": v.image,
		"image":        map[string]any{"kind": "VirtualMachineImage", "name": v.image},
		"storageClass": "my-storage-class", "powerState": "PoweredOn",
		"biosUUID": v.bios, "instanceUUID": v.instance,
	}
	maps.Copy(spec, v.spec)
	return map[string]any{
		"apiVersion": model.GroupVMOperator + "/" + model.VersionVMOperator, "kind": "VirtualMachine", "metadata": meta,
		"spec": spec,
	}
}

// newTestVM names the VM prefix-<random>: the VMs of earlier runs (-count) stay in the
// shared vcsim, and a name taken there by another object is refused.
func newTestVM(prefix string) testVM {
	uid := uuid.NewString()
	return testVM{ref: events.Ref{Plural: pluralVMs, Namespace: testNamespace, Name: prefix + "-" + uid[:8]},
		uid: uid, bios: uuid.NewString(), instance: uuid.NewString(),
		className: inventory.SeedClassName, image: inventory.SeedImageName}
}

// putVM appends the VM's record; the generation stays 1 (metadata changes only).
func (h *harness) putVM(v testVM, deleting bool) uint64 {
	h.t.Helper()
	return h.append(v.ref, v.object(1, deleting))
}

// waitSlice waits for placement's slice of ref to satisfy ok and returns it.
func (h *harness) waitSlice(ref events.Ref, what string, ok func(events.Slice, model.VirtualMachineStatus) bool) (events.Slice, model.VirtualMachineStatus) {
	h.t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		var st model.VirtualMachineStatus
		rec, err := events.LastStatus(h.ctx, h.js, ref, model.ServicePlacement)
		if err == nil && json.Unmarshal(rec.Slice.Status, &st) == nil && ok(rec.Slice, st) {
			return rec.Slice, st
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%s: no such slice of %s before the deadline; last: %s (err %v)", what, ref, rec.Slice.Status, err)
		}
		time.Sleep(pollEvery)
	}
}

// waitProcessed waits until placement's SPECS consumer has acknowledged every record up to
// seq: whatever they made the service do is done.
func (h *harness) waitProcessed(seq uint64) {
	h.t.Helper()
	deploytest.WaitProcessed(h.t, h.js, model.ServicePlacement, seq)
}

// vmsOf returns the VMs in vcsim that carry the object uid in their ExtraConfig.
func (h *harness) vmsOf(uid string) []mo.VirtualMachine {
	h.t.Helper()
	var out []mo.VirtualMachine
	for _, vm := range h.allVMs("name", "config", "runtime", "resourcePool", "parent") {
		if extraConfig(vm, vcenter.KeyUID) == uid {
			out = append(out, vm)
		}
	}
	return out
}

// hasVMNamed says whether vcsim has a VM of the name.
func (h *harness) hasVMNamed(name string) bool {
	h.t.Helper()
	return slices.ContainsFunc(h.allVMs("name"), func(vm mo.VirtualMachine) bool { return vm.Name == name })
}

// allVMs reads the properties of every VM in vcsim.
func (h *harness) allVMs(props ...string) []mo.VirtualMachine {
	h.t.Helper()
	v, err := view.NewManager(h.vc.Client).CreateContainerView(h.ctx, h.vc.ServiceContent.RootFolder, []string{"VirtualMachine"}, true)
	if err != nil {
		h.t.Fatal(err)
	}
	defer func() { _ = v.Destroy(context.Background()) }()
	var all []mo.VirtualMachine
	if err := v.Retrieve(h.ctx, []string{"VirtualMachine"}, props, &all); err != nil {
		h.t.Fatal(err)
	}
	return all
}

func extraConfig(vm mo.VirtualMachine, key string) string {
	if vm.Config == nil {
		return ""
	}
	for _, o := range vm.Config.ExtraConfig {
		if ov := o.GetOptionValue(); ov.Key == key {
			s, _ := ov.Value.(string)
			return s
		}
	}
	return ""
}

func condition(st model.VirtualMachineStatus, typ string) metav1.Condition {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return metav1.Condition{}
}

func isTrue(st model.VirtualMachineStatus, typ string) bool {
	return condition(st, typ).Status == metav1.ConditionTrue
}

func created(_ events.Slice, st model.VirtualMachineStatus) bool {
	return isTrue(st, model.ConditionCreated)
}

func objectVM(h *harness, vm mo.VirtualMachine) *object.VirtualMachine {
	return object.NewVirtualMachine(h.vc.Client, vm.Self)
}

// waitIdle waits until the service's consumers of related objects have handled their
// backlog (the seeded class and image), so that what comes next is triggered by the
// test's own messages only.
func (h *harness) waitIdle() {
	h.t.Helper()
	deadline := time.Now().Add(waitFor)
	for _, d := range []struct{ stream, durable string }{
		{events.StreamSpecs, events.Durable(model.ServicePlacement + "-related")},
		{events.StreamStatus, events.Durable(model.ServicePlacement + "-images")},
	} {
		for {
			c, err := h.js.Consumer(h.ctx, d.stream, d.durable)
			if err == nil {
				info, err := c.Info(h.ctx)
				if err == nil && info.NumPending == 0 && info.NumAckPending == 0 {
					break
				}
			}
			if time.Now().After(deadline) {
				h.t.Fatalf("consumer %s still busy at the deadline", d.durable)
			}
			time.Sleep(pollEvery)
		}
	}
}

// seededPolicy is the storage policy of the seeded StorageClass the test VMs name.
func seededPolicy(t *testing.T) storagePolicy {
	t.Helper()
	for _, o := range seeded.objs {
		meta, _ := o["metadata"].(map[string]any)
		if o["kind"] == "StorageClass" && meta["name"] == testStorageClass {
			params := o["parameters"].(map[string]any)
			return storagePolicy{class: testStorageClass, id: params[model.StoragePolicyIDParameter].(string)}
		}
	}
	t.Fatalf("no seeded StorageClass %s", testStorageClass)
	return storagePolicy{}
}

// onlyVMOf is the one VM in vcsim carrying uid; the test fails unless there is exactly one.
func (h *harness) onlyVMOf(uid string) mo.VirtualMachine {
	h.t.Helper()
	vms := h.vmsOf(uid)
	if len(vms) != 1 {
		h.t.Fatalf("%d VMs carry uid %s, want 1", len(vms), uid)
	}
	return vms[0]
}

// diskGiB is the capacity of each disk among devices, in GiB.
func diskGiB(devices []types.BaseVirtualDevice) []int64 {
	var disks []int64
	for _, d := range devices {
		if disk, ok := d.(*types.VirtualDisk); ok {
			disks = append(disks, disk.CapacityInBytes>>30)
		}
	}
	return disks
}
