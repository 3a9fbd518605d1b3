package power_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// A VM desired PoweredOn stays off until placement created it and storage, network and
// crypto all report ready for the current spec; then it runs and power reports it.
func TestPowerOnWaitsForEveryInput(t *testing.T) {
	h := start(t)
	h.putStorageClass("my-encrypted-storage-class", true) // crypto holds only a VM asking for encryption
	v := h.createVM("waits-for-inputs")
	v.obj.Spec.StorageClass = "my-encrypted-storage-class"
	h.putSpec(v)

	steps := []struct {
		name    string
		publish func()
		waiting []string // what the condition still names
	}{
		{
			name:    "nothing reported",
			publish: func() {},
			waiting: []string{"observed none", "VirtualMachineCreated (not reported by placement)"},
		},
		{
			name:    "created",
			publish: func() { h.publishInput(v, model.ServicePlacement, metav1.ConditionTrue, model.ReasonTrue) },
			waiting: []string{"observed PoweredOff", "VirtualMachineStorageReady (not reported by storage)",
				"VirtualMachineNetworkReady (not reported by network)", "VirtualMachineEncryptionSynced (not reported by crypto)"},
		},
		{
			name:    "storage not ready",
			publish: func() { h.publishInput(v, model.ServiceStorage, metav1.ConditionFalse, model.ReasonDatastoreNotFound) },
			waiting: []string{"VirtualMachineStorageReady (False DatastoreNotFound)", "VirtualMachineNetworkReady"},
		},
		{
			name: "storage and network ready",
			publish: func() {
				h.publishInput(v, model.ServiceStorage, metav1.ConditionTrue, model.ReasonTrue)
				h.publishInput(v, model.ServiceNetwork, metav1.ConditionTrue, model.ReasonTrue)
			},
			waiting: []string{"observed PoweredOff: waiting for VirtualMachineEncryptionSynced (not reported by crypto)"},
		},
	}
	for _, step := range steps {
		step.publish()
		h.waitStatus(v, step.name, notSynced(model.ReasonNotSynced, step.waiting...))
		if got := h.vcPower(v); got != types.VirtualMachinePowerStatePoweredOff {
			t.Fatalf("%s: VM is %s, want poweredOff", step.name, got)
		}
	}

	h.publishInput(v, model.ServiceCrypto, metav1.ConditionTrue, model.ReasonTrue)
	got := h.waitStatus(v, "powered on", synced(model.PowerStateOn))
	if s := h.vcPower(v); s != types.VirtualMachinePowerStatePoweredOn {
		t.Errorf("VM is %s, want poweredOn", s)
	}
	want := model.VirtualMachineStatus{
		PowerState: model.PowerStateOn,
		Hardware: &model.VirtualMachineHardwareStatus{
			CPU:    &model.VirtualMachineCPUAllocationStatus{Total: 2, Reservation: 200},
			Memory: &model.VirtualMachineMemoryAllocationStatus{Total: quantity("4Gi"), Reservation: quantity("1Gi")},
		},
		Guest:           &model.VirtualMachineGuestStatus{GuestID: guestID, GuestFullName: guestID}, // vcsim's full name is the ID
		HardwareVersion: 13,                                                                         // vcsim's default for a new VM
	}
	got.Status.Conditions = nil
	if diff := cmp.Diff(want, got.Status); diff != "" {
		t.Errorf("power's status (-want +got):\n%s", diff)
	}
	ev := h.waitEvent(v, events.TypeVirtualMachinePoweredOn)
	var data map[string]any
	if err := json.Unmarshal(ev.Data, &data); err != nil {
		t.Fatal(err)
	}
	wantData := map[string]any{"powerState": "PoweredOn", "previousPowerState": "PoweredOff", "uniqueID": v.vm.Reference().Value}
	if diff := cmp.Diff(wantData, data); diff != "" {
		t.Errorf("poweredon event data (-want +got):\n%s", diff)
	}
}

// A power-on check keeps the VM off, is named in the condition and announced on EVENTS;
// removing it powers the VM on and announces that too.
func TestPowerOnCheckBlocksUntilRemoved(t *testing.T) {
	h := start(t)
	v := h.createVM("checked")
	v.obj.Annotations = map[string]string{
		model.PowerOnCheckPrefix + "backup":   "waiting for the first backup",
		model.PowerOnCheckPrefix + "firewall": "",
	}
	h.putSpec(v)
	h.readyInputs(v)

	const checksMessage = `power-on blocked by checks backup="waiting for the first backup", firewall=""`
	blocked := h.waitStatus(v, "blocked with every input ready", func(s sliceStatus) bool {
		return powerCondition(s).Message == "desired PoweredOn, observed PoweredOff: "+checksMessage
	})
	if c := powerCondition(blocked); c.Status != metav1.ConditionFalse || c.Reason != "PowerOnBlocked" {
		t.Errorf("condition = %s %s, want False PowerOnBlocked", c.Status, c.Reason)
	}
	if got := h.vcPower(v); got != types.VirtualMachinePowerStatePoweredOff {
		t.Fatalf("blocked VM is %s, want poweredOff", got)
	}
	ev := h.waitEvent(v, events.TypeVirtualMachinePowerOnBlocked)
	var data struct {
		Checks  map[string]string `json:"checks"`
		Message string            `json:"message"`
	}
	if err := json.Unmarshal(ev.Data, &data); err != nil {
		t.Fatal(err)
	}
	wantChecks := map[string]string{"backup": "waiting for the first backup", "firewall": ""}
	if diff := cmp.Diff(wantChecks, data.Checks); diff != "" {
		t.Errorf("blocked event checks (-want +got):\n%s", diff)
	}
	if !strings.Contains(data.Message, checksMessage) {
		t.Errorf("blocked event message = %q, want it to name the checks: %q", data.Message, checksMessage)
	}

	// A privileged user removes the checks: a new SPECS record, same generation.
	v.obj.Annotations = nil
	h.putSpec(v)
	h.waitStatus(v, "powered on", synced(model.PowerStateOn))
	if got := h.vcPower(v); got != types.VirtualMachinePowerStatePoweredOn {
		t.Errorf("VM is %s, want poweredOn", got)
	}
	h.waitEvent(v, events.TypeVirtualMachinePowerOnUnblocked)
	h.waitEvent(v, events.TypeVirtualMachinePoweredOn)
	if n := h.eventCount(v, events.TypeVirtualMachinePowerOnBlocked); n != 1 {
		t.Errorf("%d blocked events, want 1", n)
	}
}

// Powering the VM off directly in vCenter is noticed through the event watch (the resync
// is far slower than the deadline) and undone, every time, each time with its events.
func TestOutOfBandPowerOffIsCorrected(t *testing.T) {
	h := start(t)
	v := h.powered("out-of-band")
	classSynced := func(s sliceStatus) *metav1.Condition {
		return reconcile.FindCondition(s.Status.Conditions, model.ConditionClassConfigurationSynced)
	}
	before := classSynced(h.waitStatus(v, "the class condition", func(s sliceStatus) bool { return classSynced(s) != nil }))
	// Transition times have a second's precision: a condition set again would show.
	h.waitUntil("the condition a second old", func() bool { return time.Since(before.LastTransitionTime.Time) > time.Second },
		func() string { return before.LastTransitionTime.String() })

	for i := range uint64(2) {
		task, err := v.vm.PowerOff(h.ctx)
		if err == nil {
			err = task.Wait(h.ctx)
		}
		if err != nil {
			t.Fatalf("power off in vCenter: %v", err)
		}
		h.waitUntil("the VM runs again", func() bool { return h.vcPower(v) == types.VirtualMachinePowerStatePoweredOn },
			func() string { return "not running" })
		h.waitUntil("a poweredoff event for each power-off", func() bool { return h.eventCount(v, events.TypeVirtualMachinePoweredOff) == i+1 },
			func() string { return fmt.Sprint(h.eventCount(v, events.TypeVirtualMachinePoweredOff)) })
		h.waitUntil("a poweredon event for each correction", func() bool { return h.eventCount(v, events.TypeVirtualMachinePoweredOn) == i+2 },
			func() string { return fmt.Sprint(h.eventCount(v, events.TypeVirtualMachinePoweredOn)) })
	}
	var off, on map[string]any
	if err := json.Unmarshal(h.waitEvent(v, events.TypeVirtualMachinePoweredOff).Data, &off); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(h.waitEvent(v, events.TypeVirtualMachinePoweredOn).Data, &on); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"powerState": "PoweredOff", "previousPowerState": "PoweredOn", "uniqueID": v.vm.Reference().Value, "outOfBand": true}
	if diff := cmp.Diff(want, off); diff != "" {
		t.Errorf("poweredoff event (-want +got):\n%s", diff)
	}
	want = map[string]any{"powerState": "PoweredOn", "previousPowerState": "PoweredOff", "uniqueID": v.vm.Reference().Value}
	if diff := cmp.Diff(want, on); diff != "" {
		t.Errorf("poweredon event (-want +got):\n%s", diff)
	}
	after := classSynced(h.waitStatus(v, "powered on", synced(model.PowerStateOn)))
	// The slice recording the change carries the conditions it does not change, so they
	// keep their transition times.
	if after == nil || !after.LastTransitionTime.Equal(&before.LastTransitionTime) {
		t.Errorf("class condition after the corrections %+v, want unchanged from %+v", after, before)
	}
}

// spec.powerState is applied as it changes; powering on again waits until the inputs
// have caught up with the new generation.
func TestSpecPowerStateChanges(t *testing.T) {
	h := start(t)
	v := h.powered("changes")

	tests := []struct {
		desired model.PowerState
		vc      types.VirtualMachinePowerState
		event   string
	}{
		{model.PowerStateSuspended, types.VirtualMachinePowerStateSuspended, events.TypeVirtualMachineSuspended},
		{model.PowerStateOff, types.VirtualMachinePowerStatePoweredOff, events.TypeVirtualMachinePoweredOff},
		{model.PowerStateOn, types.VirtualMachinePowerStatePoweredOn, events.TypeVirtualMachinePoweredOn},
	}
	for _, tt := range tests {
		v.obj.Spec.PowerState = tt.desired
		v.obj.Generation++
		h.putSpec(v)
		if tt.desired == model.PowerStateOn {
			h.waitStatus(v, "waiting for the inputs of the new generation", notSynced(model.ReasonNotSynced,
				"storage has not reconciled generation 4 yet"))
			if got := h.vcPower(v); got != types.VirtualMachinePowerStatePoweredOff {
				t.Fatalf("VM is %s before the inputs caught up, want poweredOff", got)
			}
			h.readyInputs(v)
		}
		got := h.waitStatus(v, string(tt.desired), synced(tt.desired))
		if got.Generation != v.obj.Generation || powerCondition(got).ObservedGeneration != v.obj.Generation {
			t.Errorf("%s: slice of generation %d, condition of %d, want %d", tt.desired, got.Generation, powerCondition(got).ObservedGeneration, v.obj.Generation)
		}
		if s := h.vcPower(v); s != tt.vc {
			t.Errorf("desired %s: VM is %s, want %s", tt.desired, s, tt.vc)
		}
		h.waitEvent(v, tt.event)
	}
}

// A VM being deleted is released at once and left to placement, which powers it off and
// destroys it; what power last saw stays in the slice.
func TestDeletionReleases(t *testing.T) {
	h := start(t)
	v := h.powered("deleted")
	before := h.waitStatus(v, "powered on", synced(model.PowerStateOn))

	now := metav1.NewTime(time.Now())
	v.obj.DeletionTimestamp = &now
	h.putSpec(v)
	got := h.waitStatus(v, "released", func(s sliceStatus) bool { return s.Released })
	if diff := cmp.Diff(before.Status, got.Status); diff != "" {
		t.Errorf("status changed on release (-before +after):\n%s", diff)
	}
	if s := h.vcPower(v); s != types.VirtualMachinePowerStatePoweredOn {
		t.Errorf("VM is %s after release, want it left running for placement", s)
	}
}

func quantity(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}
