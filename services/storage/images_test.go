package storage

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// An image created at any time gets the status of the content library item its
// providerRef names, the seed's image's status for its item; one naming no item says so.
func TestImageStatusFromItsLibraryItem(t *testing.T) {
	js := startService(t)
	seed := seededImage(t, "my-namespace", inventory.SeedImageName)
	spec := seed["spec"].(map[string]any)

	late := putImage(t, js, "vmi-late", spec["providerRef"])
	st := waitImage(t, js, late, "Ready", func(st model.VirtualMachineImageStatus) bool { return ready(st) == "True" })
	var want model.VirtualMachineImageStatus
	raw, _ := json.Marshal(seed["status"])
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if st.ProviderItemID == "" || st.ProviderItemID != want.ProviderItemID || st.Name != want.Name || st.Type != want.Type || len(st.Disks) != len(want.Disks) {
		t.Errorf("status item %q %q %q, %d disks; want the seed image's: %q %q %q, %d disks",
			st.ProviderItemID, st.Name, st.Type, len(st.Disks), want.ProviderItemID, want.Name, want.Type, len(want.Disks))
	}

	missing := putImage(t, js, "vmi-missing", map[string]any{
		"apiVersion": "imageregistry.vmware.com/v1alpha1", "kind": "ContentLibraryItem", "name": "clitem-00000000000000000",
	})
	st = waitImage(t, js, missing, "Ready False", func(st model.VirtualMachineImageStatus) bool { return ready(st) == "False" })
	if c := st.Conditions[0]; c.Reason != model.ReasonNotFound || !strings.Contains(c.Message, "clitem-00000000000000000") {
		t.Errorf("Ready = %s %q, want NotFound naming the item", c.Reason, c.Message)
	}
}

func seededImage(t *testing.T, namespace, name string) map[string]any {
	t.Helper()
	for _, o := range vc.Objects {
		meta, _ := o["metadata"].(map[string]any)
		if o["kind"] == "VirtualMachineImage" && meta["namespace"] == namespace && meta["name"] == name {
			return o
		}
	}
	t.Fatalf("no seeded image %s/%s", namespace, name)
	return nil
}

// putImage creates a VirtualMachineImage in my-namespace with the providerRef.
func putImage(t *testing.T, js jetstream.JetStream, name string, providerRef any) events.Ref {
	t.Helper()
	ref := events.Ref{Plural: pluralImages, Namespace: "my-namespace", Name: name}
	err := deploytest.PutObject(t.Context(), js, ref, map[string]any{
		"apiVersion": "vmoperator.vmware.com/v1alpha5", "kind": "VirtualMachineImage",
		"metadata": map[string]any{"name": name, "namespace": ref.Namespace, "uid": uuid.NewString(), "generation": 1},
		"spec":     map[string]any{"providerRef": providerRef},
	})
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// waitImage waits, with a deadline, for the service's status of the image to satisfy ok.
func waitImage(t *testing.T, js jetstream.JetStream, ref events.Ref, what string, ok func(model.VirtualMachineImageStatus) bool) model.VirtualMachineImageStatus {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var st model.VirtualMachineImageStatus
		rec, err := events.LastStatus(t.Context(), js, ref, model.ServiceStorage)
		if err == nil && json.Unmarshal(rec.Slice.Status, &st) == nil && ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no status %q before the deadline (last %+v, %v)", ref, what, st, err)
		}
		time.Sleep(20 * time.Millisecond) // poll interval of a deadline-bounded wait
	}
}

func ready(st model.VirtualMachineImageStatus) string {
	for _, c := range st.Conditions {
		if c.Type == model.ConditionReady {
			return string(c.Status)
		}
	}
	return ""
}
