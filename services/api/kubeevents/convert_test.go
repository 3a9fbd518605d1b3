package kubeevents

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vmop/vmop/pkg/events"
)

// cloudEvent is the body PublishEvent stores.
func cloudEvent(t *testing.T, id, typ string, data any) []byte {
	t.Helper()
	raw, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(events.CloudEvent{SpecVersion: "1.0", ID: id, Type: typ, Time: "2026-11-25T10:00:00.5Z", Data: raw})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func TestConvert(t *testing.T) {
	vm := events.Ref{Plural: "virtualmachines", Namespace: "my-namespace", Name: "my-vm"}
	claim := events.Ref{Plural: "persistentvolumeclaims", Namespace: "my-namespace", Name: "my-claim"}
	object := map[string]any{"metadata": map[string]any{"uid": "u-1", "generation": 2}}
	tests := []struct {
		name, typ, id           string
		about                   events.Ref
		data                    any
		reason, message, evType string
		component, involvedUID  string
	}{
		{"created", events.TypeVirtualMachineCreated, "u-1/created", vm, object,
			"Created", "Created (generation 2)", "Normal", "vmop-api", "u-1"},
		{"updated", events.TypeVirtualMachineUpdated, "u-1/updated/3.4", vm, object,
			"Updated", "Spec changed (generation 2)", "Normal", "vmop-api", "u-1"},
		{"powered on", events.TypeVirtualMachinePoweredOn, "u-1/poweredon/7", vm,
			map[string]any{"powerState": "PoweredOn", "previousPowerState": "PoweredOff"},
			"PoweredOn", "Powered on, was PoweredOff", "Normal", "vmop-power", "u-1"},
		{"powered off in vCenter", events.TypeVirtualMachinePoweredOff, "u-1/poweredoff/9", vm,
			map[string]any{"powerState": "PoweredOff", "previousPowerState": "PoweredOn", "outOfBand": true},
			"PoweredOff", "Powered off outside vmop (in vCenter), was PoweredOn", "Normal", "vmop-power", "u-1"},
		{"power-on blocked", events.TypeVirtualMachinePowerOnBlocked, "u-1/poweronblocked/5", vm,
			map[string]any{"checks": map[string]string{"backup": "first backup", "av": "scan"}},
			"PowerOnBlocked", `Power-on waits for the power-on checks av="scan", backup="first backup"`, "Warning", "vmop-power", "u-1"},
		{"condition went False", events.TypeVirtualMachineConditionChanged, "u-1/conditionchanged/3.4/Ready", vm,
			map[string]any{"type": "Ready", "status": "False", "reason": "ProbeFailed", "message": "no answer"},
			"Ready", "False (ProbeFailed): no answer", "Warning", "vmop-api", "u-1"},
		{"condition went True", events.TypeVirtualMachineConditionChanged, "u-1/conditionchanged/3.5/Ready", vm,
			map[string]any{"type": "Ready", "status": "True", "reason": "ProbeSucceeded"},
			"Ready", "True (ProbeSucceeded)", "Normal", "vmop-api", "u-1"},
		{"condition whose reason is its status", events.TypeVirtualMachineConditionChanged, "u-1/conditionchanged/3.6/VirtualMachineClassReady", vm,
			map[string]any{"type": "VirtualMachineClassReady", "status": "True", "reason": "True"},
			"VirtualMachineClassReady", "True", "Normal", "vmop-api", "u-1"},
		{"delete blocked", events.TypeVirtualMachineDeleteBlocked, "u-1/deleteblocked/3.4", vm,
			map[string]any{"checks": map[string]string{"backup": "running"}},
			"DeleteBlocked", `Deletion waits for the delete checks backup="running"`, "Warning", "vmop-api", "u-1"},
		{"another kind's event says it itself", "vmop.persistentvolumeclaim.provisioningfailed", "c-1/provisioningfailed/4", claim,
			map[string]any{"reason": "ProvisioningFailed", "message": "no space", "type": "Warning", "component": "vmop-storage"},
			"ProvisioningFailed", "no space", "Warning", "vmop-storage", "c-1"},
		{"an event that says nothing", "vmop.persistentvolumeclaim.bound", "c-1/bound/5", claim, map[string]any{},
			"Bound", "Bound", "Normal", "vmop", "c-1"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq := uint64(100 + i)
			ev, err := Convert(events.EventSubject(tt.about, tt.typ), seq, time.Now(), cloudEvent(t, tt.id, tt.typ, tt.data))
			if err != nil {
				t.Fatal(err)
			}
			if ev.Reason != tt.reason || ev.Message != tt.message || ev.Type != tt.evType || ev.Source.Component != tt.component {
				t.Errorf("reason, message, type, source = %q, %q, %q, %q; want %q, %q, %q, %q",
					ev.Reason, ev.Message, ev.Type, ev.Source.Component, tt.reason, tt.message, tt.evType, tt.component)
			}
			want := corev1.ObjectReference{Kind: "VirtualMachine", APIVersion: "vmoperator.vmware.com/v1alpha5",
				Namespace: "my-namespace", Name: "my-vm", UID: types.UID(tt.involvedUID)}
			if tt.about == claim {
				want.Kind, want.APIVersion, want.Name = "PersistentVolumeClaim", "v1", "my-claim"
			}
			if ev.InvolvedObject != want {
				t.Errorf("involvedObject = %+v, want %+v", ev.InvolvedObject, want)
			}
			if ev.Namespace != "my-namespace" || ev.ResourceVersion != strconv.FormatUint(seq, 10) || ev.Count != 1 ||
				!ev.FirstTimestamp.Equal(&ev.LastTimestamp) || ev.FirstTimestamp.UTC().Format(time.RFC3339) != "2026-11-25T10:00:00Z" {
				t.Errorf("metadata, count, timestamps = %+v, %d, %v, %v", ev.ObjectMeta, ev.Count, ev.FirstTimestamp, ev.LastTimestamp)
			}
		})
	}
}

func TestConvertNamesAlikeEverywhere(t *testing.T) {
	vm := events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: "web.example.com"}
	body := cloudEvent(t, "u/created", events.TypeVirtualMachineCreated, map[string]any{})
	a, err := Convert(events.EventSubject(vm, events.TypeVirtualMachineCreated), 0x2a, time.Now(), body)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Convert(events.EventSubject(vm, events.TypeVirtualMachineCreated), 0x2a, time.Now().Add(time.Hour), body)
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != "web.example.com.000000000000002a" || a.UID != b.UID || a.UID == "" {
		t.Errorf("name %q, uids %q and %q: want the name with the sequence and one uid", a.Name, a.UID, b.UID)
	}
}

func TestConvertRefusesWhatIsNoEvent(t *testing.T) {
	cluster := events.Ref{Plural: "storageclasses", Name: "gold"}
	for name, c := range map[string]struct {
		subject string
		body    []byte
	}{
		"cluster-scoped object": {events.EventSubject(cluster, events.TypeVirtualMachineCreated), cloudEvent(t, "u/created", "vmop.storageclass.created", nil)},
		"not a CloudEvent":      {"vmop.events.virtualmachines.ns.vm.created", []byte("not json")},
		"not an events subject": {"vmop.spec.virtualmachines.ns.vm", cloudEvent(t, "u/created", events.TypeVirtualMachineCreated, nil)},
	} {
		if _, err := Convert(c.subject, 1, time.Now(), c.body); err == nil {
			t.Errorf("%s: converted", name)
		}
	}
}
