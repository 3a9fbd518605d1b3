package power_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apitypes "k8s.io/apimachinery/pkg/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
	"github.com/vmop/vmop/services/power"
)

const (
	deadline  = 10 * time.Second
	namespace = "my-namespace"
	// The test VMs are what placement makes of the seed's class: 2 CPUs, 4 GiB, 200 MHz
	// and 1024 MB reserved.
	guestID = "vmwarePhoton64Guest"
)

// harness is one power service on its own NATS server and its own seeded vcsim (vcsim
// never frees an event collector, even at logout, and allows 32: a shared one would run
// out under -count). The tests do not run in parallel: creating a vcsim model writes
// package-level state (notes P15).
type harness struct {
	t   *testing.T
	ctx context.Context
	js  jetstream.JetStream
	vc  *govmomi.Client
	sim *inventory.Sim
	cfg power.Config // of the running service
	// stop stops the running service and checks that it stopped promptly.
	stop func()
}

// start runs the service until the test ends, and checks that it then stops promptly.
func start(t *testing.T) *harness { return startWith(t, power.Config{}) }

// startWith is start with the modes' settings of cfg.
func startWith(t *testing.T, cfg power.Config) *harness {
	t.Helper()
	ctx := t.Context()
	sim, vc := startSim(t)
	js, _ := eventstest.JetStream(t)
	cfg.JetStream, cfg.VCenter = js, sim.Endpoint()
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	h := &harness{t: t, ctx: ctx, js: js, vc: vc, sim: sim, cfg: cfg}
	h.run()
	t.Cleanup(func() { h.stop() })
	return h
}

// startSim starts a seeded vcsim of the test's own, stopped when the test ends (after the
// service stopped: Close cancels long polls left behind), and a client logged in to it.
func startSim(t *testing.T) (*inventory.Sim, *govmomi.Client) {
	t.Helper()
	sim, err := inventory.StartSim(t.Context(), inventory.SimConfig{Username: "admin", Password: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	vc, err := sim.Client(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := inventory.Seed(t.Context(), vc, sim.URL.User); err != nil {
		t.Fatal(err)
	}
	return sim, vc
}

// stopIdle stops the service once no reconcile of v runs (its lease is free): a stop in
// the middle of one leaves the lease to expire (LeaseTTL), which the next run would wait
// out.
func (h *harness) stopIdle(v *testVM) {
	h.t.Helper()
	leases, err := events.Leases(h.ctx, h.js, model.ServicePower)
	if err != nil {
		h.t.Fatal(err)
	}
	holder := func() string {
		e, err := leases.Get(h.ctx, events.LeaseKey(v.ref))
		if err != nil {
			return "" // never taken
		}
		return string(e.Value())
	}
	h.waitUntil("no reconcile of "+v.ref.Name+" running", func() bool { return holder() == "" }, holder)
	h.stop()
}

// run starts the service with h.cfg; h.stop stops it.
func (h *harness) run() {
	runCtx, cancel := context.WithCancel(h.ctx)
	done := make(chan error, 1)
	go func() { done <- power.Run(runCtx, h.cfg) }()
	h.stop = func() {
		h.stop = func() {}
		cancel()
		select {
		case err := <-done:
			if err != nil {
				h.t.Errorf("Run: %v", err)
			}
		case <-time.After(deadline):
			h.t.Error("Run did not return after its context ended")
		}
	}
}

// testVM is a VirtualMachine object and the vSphere VM placement made for it.
type testVM struct {
	ref     events.Ref
	obj     model.VirtualMachine
	specSeq uint64
	vm      *object.VirtualMachine
}

// createVM creates the vSphere VM the way placement does (powered off, the spec's
// instance UUID, the ExtraConfig keys naming the object) without storing the object yet.
func (h *harness) createVM(name string) *testVM {
	h.t.Helper()
	return h.createVMWith(name, nil)
}

// createVMWith is createVM with the create spec changed by change.
func (h *harness) createVMWith(name string, change func(*types.VirtualMachineConfigSpec)) *testVM {
	h.t.Helper()
	v := &testVM{ref: events.Ref{Plural: "virtualmachines", Namespace: namespace, Name: name}}
	v.obj.APIVersion, v.obj.Kind = "vmoperator.vmware.com/v1alpha5", "VirtualMachine"
	v.obj.Name, v.obj.Namespace = name, namespace
	v.obj.UID = apitypes.UID(uuid.NewString())
	v.obj.Generation = 1
	v.obj.Spec.PowerState = model.PowerStateOn
	v.obj.Spec.InstanceUUID = uuid.NewString()
	v.obj.Spec.ClassName, v.obj.Spec.StorageClass = inventory.SeedClassName, "my-storage-class"

	finder := find.NewFinder(h.vc.Client)
	dc, err := finder.Datacenter(h.ctx, inventory.Datacenter)
	if err != nil {
		h.t.Fatal(err)
	}
	folders, err := dc.Folders(h.ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	zone := inventory.Zones[0]
	pool, err := finder.ResourcePool(h.ctx, path.Join(dc.InventoryPath, "host", zone.Cluster, "Resources"))
	if err != nil {
		h.t.Fatal(err)
	}
	cpuReservation, memReservation := int64(200), int64(1024)
	cs := types.VirtualMachineConfigSpec{
		Name: name + "-" + string(v.obj.UID)[:8], GuestId: guestID, NumCPUs: 2, MemoryMB: 4096,
		InstanceUuid:     v.obj.Spec.InstanceUUID,
		Files:            &types.VirtualMachineFileInfo{VmPathName: "[" + zone.Datastore + "]"},
		CpuAllocation:    &types.ResourceAllocationInfo{Reservation: &cpuReservation},
		MemoryAllocation: &types.ResourceAllocationInfo{Reservation: &memReservation},
		ExtraConfig: []types.BaseOptionValue{
			&types.OptionValue{Key: vcenter.KeyObject, Value: namespace + "/" + name},
			&types.OptionValue{Key: vcenter.KeyUID, Value: string(v.obj.UID)},
		},
	}
	if change != nil {
		change(&cs)
	}
	task, err := folders.VmFolder.CreateVM(h.ctx, cs, pool, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	info, err := task.WaitForResult(h.ctx)
	if err != nil {
		h.t.Fatalf("create VM: %v", err)
	}
	v.vm = object.NewVirtualMachine(h.vc.Client, info.Result.(types.ManagedObjectReference))
	return v
}

// putSpec stores the object as it is now, as the gateway would.
func (h *harness) putSpec(v *testVM) {
	h.t.Helper()
	body, err := json.Marshal(v.obj)
	if err != nil {
		h.t.Fatal(err)
	}
	if v.specSeq, err = events.AppendSpec(h.ctx, h.js, v.ref, events.OpPut, body, v.specSeq, nil); err != nil {
		h.t.Fatal(err)
	}
}

// publish stores service's slice about v for its current generation.
func (h *harness) publish(v *testVM, service string, status any) {
	h.t.Helper()
	raw, err := json.Marshal(status)
	if err != nil {
		h.t.Fatal(err)
	}
	s := events.Slice{Service: service, UID: string(v.obj.UID), Generation: v.obj.Generation, Status: raw}
	if _, err := events.PublishStatus(h.ctx, h.js, v.ref, s); err != nil {
		h.t.Fatal(err)
	}
}

// publishInput publishes an input service's slice the way that service reports its part
// ready (or not, with the given status and reason).
func (h *harness) publishInput(v *testVM, service string, status metav1.ConditionStatus, reason string) {
	h.t.Helper()
	var conds []metav1.Condition
	for _, typ := range inputConditions[service] {
		conds = append(conds, metav1.Condition{Type: typ, Status: status, Reason: reason, ObservedGeneration: v.obj.Generation,
			LastTransitionTime: metav1.Now().Rfc3339Copy()})
	}
	st := map[string]any{"conditions": conds}
	if service == model.ServicePlacement {
		st["uniqueID"], st["instanceUUID"] = v.vm.Reference().Value, v.obj.Spec.InstanceUUID
	}
	h.publish(v, service, st)
}

var inputConditions = map[string][]string{
	model.ServicePlacement: {model.ConditionCreated},
	model.ServiceStorage:   {model.ConditionStorageReady},
	model.ServiceNetwork:   {model.ConditionNetworkReady, model.ConditionBootstrapReady},
	model.ServiceCrypto:    {model.ConditionEncryptionSynced},
}

// readyInputs publishes every input service's slice, all ready.
func (h *harness) readyInputs(v *testVM) {
	h.t.Helper()
	for _, svc := range []string{model.ServicePlacement, model.ServiceStorage, model.ServiceNetwork, model.ServiceCrypto} {
		h.publishInput(v, svc, metav1.ConditionTrue, model.ReasonTrue)
	}
}

// powered creates a VM, stores it desired PoweredOn with every input ready and waits
// until it runs.
func (h *harness) powered(name string) *testVM {
	h.t.Helper()
	v := h.createVM(name)
	h.putSpec(v)
	h.readyInputs(v)
	h.waitStatus(v, "powered on", synced(model.PowerStateOn))
	return v
}

// sliceStatus is power's newest slice about v.
type sliceStatus struct {
	events.Slice
	Status model.VirtualMachineStatus
}

// waitStatus waits for power's slice about v to satisfy ok.
func (h *harness) waitStatus(v *testVM, what string, ok func(sliceStatus) bool) sliceStatus {
	h.t.Helper()
	var last sliceStatus
	h.waitUntil("power's slice: "+what, func() bool {
		rec, err := events.LastStatus(h.ctx, h.js, v.ref, model.ServicePower)
		if err != nil {
			return false
		}
		last = sliceStatus{Slice: rec.Slice}
		if len(rec.Slice.Status) > 0 && json.Unmarshal(rec.Slice.Status, &last.Status) != nil {
			return false
		}
		return last.UID == string(v.obj.UID) && ok(last)
	}, func() string { b, _ := json.Marshal(last); return string(b) })
	return last
}

// powerCondition is the VirtualMachinePowerStateSynced condition of s, or a zero one.
func powerCondition(s sliceStatus) metav1.Condition {
	for _, c := range s.Status.Conditions {
		if c.Type == model.ConditionPowerStateSynced {
			return c
		}
	}
	return metav1.Condition{}
}

// synced: observed = desired = state.
func synced(state model.PowerState) func(sliceStatus) bool {
	return func(s sliceStatus) bool {
		c := powerCondition(s)
		return s.Status.PowerState == state && c.Status == metav1.ConditionTrue &&
			c.Reason == model.ReasonSynced && c.Message == string(state)
	}
}

// notSynced: the condition is False with reason and its message contains every part.
func notSynced(reason string, parts ...string) func(sliceStatus) bool {
	return func(s sliceStatus) bool {
		c := powerCondition(s)
		if c.Status != metav1.ConditionFalse || c.Reason != reason {
			return false
		}
		for _, p := range parts {
			if !strings.Contains(c.Message, p) {
				return false
			}
		}
		return true
	}
}

// vcPower is the VM's power state in vCenter.
func (h *harness) vcPower(v *testVM) types.VirtualMachinePowerState {
	h.t.Helper()
	var o mo.VirtualMachine
	if err := v.vm.Properties(h.ctx, v.vm.Reference(), []string{"runtime.powerState"}, &o); err != nil {
		h.t.Fatal(err)
	}
	return o.Runtime.PowerState
}

// waitEvent waits for a CloudEvent of type typ about v on EVENTS and returns the newest.
func (h *harness) waitEvent(v *testVM, typ string) events.CloudEvent {
	h.t.Helper()
	st, err := h.js.Stream(h.ctx, events.StreamEvents)
	if err != nil {
		h.t.Fatal(err)
	}
	var ev events.CloudEvent
	h.waitUntil("a "+typ+" event", func() bool {
		raw, err := st.GetLastMsgForSubject(h.ctx, events.EventSubject(v.ref, typ))
		if errors.Is(err, jetstream.ErrMsgNotFound) || err != nil {
			return false
		}
		return json.Unmarshal(raw.Data, &ev) == nil
	}, func() string { return "none" })
	return ev
}

// eventCount is how many events of type typ about v EVENTS holds.
func (h *harness) eventCount(v *testVM, typ string) uint64 {
	h.t.Helper()
	st, err := h.js.Stream(h.ctx, events.StreamEvents)
	if err != nil {
		h.t.Fatal(err)
	}
	subject := events.EventSubject(v.ref, typ)
	info, err := st.Info(h.ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		h.t.Fatal(err)
	}
	return info.State.Subjects[subject]
}

func (h *harness) waitUntil(what string, ok func() bool, last func() string) {
	h.t.Helper()
	h.waitUntilWithin(deadline, what, ok, last)
}

// waitUntilWithin is waitUntil with a deadline of its own.
func (h *harness) waitUntilWithin(d time.Duration, what string, ok func() bool, last func() string) {
	h.t.Helper()
	end := time.Now().Add(d)
	for !ok() {
		if time.Now().After(end) {
			h.t.Fatalf("%s: not before the deadline; last seen: %s", what, last())
		}
		time.Sleep(10 * time.Millisecond) // poll interval of a deadline-bounded wait
	}
}
