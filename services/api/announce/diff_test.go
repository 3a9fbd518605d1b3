package announce

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmop/vmop/services/api/readmodel"
)

// vmJSON is a changed VirtualMachine as the read model serves it.
func vmJSON(t *testing.T, uid string, generation int64, rv string, deleting bool, annotations map[string]string, conditions ...map[string]any) []byte {
	t.Helper()
	meta := map[string]any{"name": "vm", "namespace": "ns", "uid": uid, "generation": generation,
		"resourceVersion": rv, "annotations": annotations}
	if deleting {
		meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
	}
	data, err := json.Marshal(map[string]any{"metadata": meta, "status": map[string]any{"conditions": conditions}})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func cond(typ, status, reason string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": "",
		"lastTransitionTime": "2025-01-01T00:00:00Z"}
}

// Each change is compared with what was announced before it; only news is announced.
func TestAnnounceComparesWithWhatWasAnnounced(t *testing.T) {
	check := map[string]string{"delete.check.vmoperator.vmware.com/backup": "running"}
	steps := []struct {
		name    string
		typ     string
		object  []byte
		wantIDs []string
	}{
		{"created with a condition", readmodel.Added, vmJSON(t, "u1", 1, "1.0", false, nil, cond("Ready", "False", "Pending")),
			[]string{"u1/created", "u1/conditionchanged/1.0/Ready"}},
		{"only observedGeneration and time changed", readmodel.Modified, vmJSON(t, "u1", 1, "1.2", false, nil,
			map[string]any{"type": "Ready", "status": "False", "reason": "Pending", "message": "", "observedGeneration": 1,
				"lastTransitionTime": "2025-02-02T00:00:00Z"}),
			nil},
		{"a condition flips and a new one appears", readmodel.Modified, vmJSON(t, "u1", 1, "1.3", false, nil,
			cond("Ready", "True", "Ready"), cond("VirtualMachineCreated", "True", "Created")),
			[]string{"u1/conditionchanged/1.3/Ready", "u1/conditionchanged/1.3/VirtualMachineCreated"}},
		{"spec changed", readmodel.Modified, vmJSON(t, "u1", 2, "4.3", false, nil,
			cond("Ready", "True", "Ready"), cond("VirtualMachineCreated", "True", "Created")),
			[]string{"u1/updated/4.3"}},
		{"an annotation is no news", readmodel.Modified, vmJSON(t, "u1", 2, "5.3", false, check,
			cond("Ready", "True", "Ready"), cond("VirtualMachineCreated", "True", "Created")),
			nil},
		{"deletion (its generation bumped) held back by a check", readmodel.Modified, vmJSON(t, "u1", 3, "6.3", true, check,
			cond("Ready", "True", "Ready"), cond("VirtualMachineCreated", "True", "Created")),
			[]string{"u1/deleting", "u1/deleteblocked/6.3"}},
		{"the same checks block no more", readmodel.Modified, vmJSON(t, "u1", 3, "6.4", true, check,
			cond("Ready", "False", "Deleting"), cond("VirtualMachineCreated", "True", "Created")),
			[]string{"u1/conditionchanged/6.4/Ready"}},
		{"the last check is removed", readmodel.Modified, vmJSON(t, "u1", 3, "7.4", true, nil,
			cond("Ready", "False", "Deleting"), cond("VirtualMachineCreated", "True", "Created")),
			[]string{"u1/deleteunblocked/7.4"}},
		{"deleted", readmodel.Deleted, vmJSON(t, "u1", 3, "8.4", true, nil), []string{"u1/deleted"}},
		{"a new incarnation", readmodel.Added, vmJSON(t, "u2", 1, "9.0", false, nil), []string{"u2/created"}},
		{"a spec change and the deletion seen as one", readmodel.Modified, vmJSON(t, "u2", 3, "11.0", true, nil),
			[]string{"u2/updated/11.0", "u2/deleting"}},
		{"the name's next incarnation replaces one whose tombstone was missed", readmodel.Added,
			vmJSON(t, "u3", 1, "12.0", false, nil), []string{"u2/deleted", "u3/created"}},
	}
	var prev *announced
	for _, s := range steps {
		vm, err := decodeVMChange(s.object)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		next, anns, err := announce(prev, s.typ, vm, s.object)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		var ids []string
		for _, a := range anns {
			ids = append(ids, a.ID)
		}
		if diff := cmp.Diff(s.wantIDs, ids); diff != "" {
			t.Errorf("%s: event ids (-want +got):\n%s", s.name, diff)
		}
		prev = next
	}
	if prev == nil || prev.UID != "u3" {
		t.Errorf("announced after the last step = %+v, want u3", prev)
	}
}

// The events that carry the VM leave out spec.bootstrap: inline cloud-init and Sysprep can
// hold credentials, and EVENTS is read by outside systems.
func TestEventsCarryNoBootstrap(t *testing.T) {
	const secret = "#cloud-config\npassword: hunter2"
	object, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"name": "vm", "namespace": "ns", "uid": "u1", "generation": 1, "resourceVersion": "1.0"},
		"spec": map[string]any{"className": "small",
			"bootstrap": map[string]any{"cloudInit": map[string]any{"rawCloudConfig": map[string]any{"name": "s", "key": "k"}, "cloudConfig": map[string]any{"runcmd": []string{secret}}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	vm, err := decodeVMChange(object)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{readmodel.Added, readmodel.Deleted} {
		_, anns, err := announce(nil, typ, vm, object)
		if err != nil || len(anns) == 0 {
			t.Fatalf("%s: %d events, %v", typ, len(anns), err)
		}
		data, err := json.Marshal(anns[0].Data)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Spec map[string]any `json:"spec"`
		}
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		if _, ok := got.Spec["bootstrap"]; ok || got.Spec["className"] != "small" {
			t.Errorf("%s event's spec = %v, want the spec without bootstrap", typ, got.Spec)
		}
	}
}
