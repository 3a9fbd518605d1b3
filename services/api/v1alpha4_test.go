package api_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

const vmsV1alpha4 = "/apis/vmoperator.vmware.com/v1alpha4/namespaces/my-namespace/virtualmachines"

// upstreamExampleVM is VM Operator's docs/concepts/workloads/vm-example.yaml, verbatim.
const upstreamExampleVM = `apiVersion: vmoperator.vmware.com/v1alpha4
kind: VirtualMachine
metadata:
  name: my-vm
spec:
  className:    my-vm-class
  imageName:    vmi-0a0044d7c690bcbea
  storageClass: my-storage-class
  bootstrap:
    cloudInit:
      cloudConfig: {}
`

// TestV1alpha4Discovery: v1alpha5 stays the preferred (storage) version and v1alpha4 is
// listed after it, with the VirtualMachine resource.
func TestV1alpha4Discovery(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	code, body := g.do("GET", "/apis", adminToken, nil)
	if code != http.StatusOK {
		t.Fatalf("GET /apis: %d %s", code, body)
	}
	var list struct {
		Groups []struct {
			Name     string `json:"name"`
			Versions []struct {
				Version string `json:"version"`
			} `json:"versions"`
			PreferredVersion struct {
				Version string `json:"version"`
			} `json:"preferredVersion"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, gr := range list.Groups {
		if gr.Name != "vmoperator.vmware.com" {
			continue
		}
		found = true
		var versions []string
		for _, v := range gr.Versions {
			versions = append(versions, v.Version)
		}
		if !reflect.DeepEqual(versions, []string{"v1alpha5", "v1alpha4"}) || gr.PreferredVersion.Version != "v1alpha5" {
			t.Errorf("vmoperator.vmware.com versions %v preferred %s", versions, gr.PreferredVersion.Version)
		}
	}
	if !found {
		t.Fatalf("/apis lacks vmoperator.vmware.com: %s", body)
	}
	code, body = g.do("GET", "/apis/vmoperator.vmware.com", adminToken, nil)
	if g := decode(t, body); code != http.StatusOK || g["kind"] != "APIGroup" || field(g, "preferredVersion", "version") != "v1alpha5" {
		t.Errorf("GET /apis/vmoperator.vmware.com: %d %s", code, body)
	}
	code, body = g.do("GET", "/apis/vmoperator.vmware.com/v1alpha4", adminToken, nil)
	if code != http.StatusOK || !strings.Contains(string(body), `"name":"virtualmachines"`) || !strings.Contains(string(body), `"groupVersion":"vmoperator.vmware.com/v1alpha4"`) {
		t.Errorf("GET /apis/vmoperator.vmware.com/v1alpha4: %d %s", code, body)
	}
	if code, body := g.do("GET", "/openapi/v3/apis/vmoperator.vmware.com/v1alpha4", adminToken, nil); code != http.StatusOK ||
		!strings.Contains(string(body), "com.vmware.vmoperator.v1alpha4.VirtualMachine") {
		t.Errorf("GET /openapi/v3/apis/vmoperator.vmware.com/v1alpha4: %d", code)
	}
}

// TestV1alpha4VirtualMachine creates the upstream v1alpha4 example and reads, watches,
// lists, updates and patches it through v1alpha4, checking it is stored as v1alpha5 and
// that v1alpha5-only fields (the defaulted IDE controllers) survive v1alpha4 writes.
func TestV1alpha4VirtualMachine(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	if code, body := g.do("POST", "/apis/storage.k8s.io/v1/storageclasses", adminToken, storageClass, "Content-Type", "application/yaml"); code != http.StatusCreated {
		t.Fatalf("create storage class: %d %s", code, body)
	}
	if code, body := g.do("POST", images, adminToken, photonImage, "Content-Type", "application/yaml"); code != http.StatusCreated {
		t.Fatalf("create image: %d %s", code, body)
	}
	events := g.watchFrom(vmsV1alpha4, "")

	code, body := g.do("POST", vmsV1alpha4+"?fieldValidation=Strict", userToken, upstreamExampleVM, "Content-Type", "application/yaml")
	if code != http.StatusCreated {
		t.Fatalf("create v1alpha4 VM: %d %s", code, body)
	}
	created := decode(t, body)
	checkV1alpha4(t, "create response", created)
	if field(created, "spec", "powerState") != "PoweredOn" || field(created, "spec", "image", "name") != "vmi-0a0044d7c690bcbea" {
		t.Errorf("create defaults missing: %s", body)
	}

	_, body = g.do("GET", vms+"/my-vm", adminToken, nil)
	hub := decode(t, body)
	ide := field(hub, "spec", "hardware", "ideControllers")
	if hub["apiVersion"] != "vmoperator.vmware.com/v1alpha5" || ide == nil {
		t.Fatalf("stored VM read as v1alpha5: %s", body)
	}

	ev := next(t, events)
	if ev.Type != "ADDED" {
		t.Errorf("watch event %s", ev.Type)
	}
	checkV1alpha4(t, "watch event", ev.Object)

	code, body = g.do("GET", vmsV1alpha4, adminToken, nil)
	list := decode(t, body)
	items, _ := list["items"].([]any)
	if code != http.StatusOK || list["apiVersion"] != "vmoperator.vmware.com/v1alpha4" || len(items) != 1 {
		t.Fatalf("list v1alpha4: %d %s", code, body)
	}
	checkV1alpha4(t, "list item", items[0].(map[string]any))

	// Read-modify-write through v1alpha4: the IDE controllers v1alpha4 cannot show stay.
	code, body = g.do("GET", vmsV1alpha4+"/my-vm", userToken, nil)
	if code != http.StatusOK {
		t.Fatalf("get v1alpha4: %d %s", code, body)
	}
	got := decode(t, body)
	checkV1alpha4(t, "get", got)
	got["metadata"].(map[string]any)["labels"] = map[string]any{"tier": "web"}
	code, body = g.do("PUT", vmsV1alpha4+"/my-vm", userToken, got)
	if code != http.StatusOK {
		t.Fatalf("update v1alpha4: %d %s", code, body)
	}
	checkV1alpha4(t, "update response", decode(t, body))
	if ev := next(t, events); ev.Type != "MODIFIED" {
		t.Errorf("watch event %s", ev.Type)
	} else {
		checkV1alpha4(t, "watch MODIFIED", ev.Object)
	}

	// A merge patch on the v1alpha4 URL applies to the v1alpha4 form: spec.cdrom.
	code, body = g.do("PATCH", vmsV1alpha4+"/my-vm", userToken,
		`{"spec":{"cdrom":[{"name":"cd1","image":{"name":"no-such-iso"}}]}}`, "Content-Type", "application/merge-patch+json")
	if code != http.StatusUnprocessableEntity || !strings.Contains(string(body), "spec.cdrom[0]") || strings.Contains(string(body), "spec.hardware") {
		t.Errorf("patch cdrom with a missing image: want 422 naming spec.cdrom[0], got %d %s", code, body)
	}
	code, body = g.do("PATCH", vmsV1alpha4+"/my-vm", userToken,
		`{"metadata":{"labels":{"tier":"db"}},"spec":{"powerState":"PoweredOff"}}`, "Content-Type", "application/merge-patch+json")
	if code != http.StatusOK {
		t.Fatalf("merge patch v1alpha4: %d %s", code, body)
	}
	checkV1alpha4(t, "patch response", decode(t, body))
	code, body = g.do("PATCH", vmsV1alpha4+"/my-vm", userToken,
		`[{"op":"replace","path":"/spec/powerState","value":"PoweredOn"}]`, "Content-Type", "application/json-patch+json")
	if code != http.StatusOK || field(decode(t, body), "spec", "powerState") != "PoweredOn" {
		t.Fatalf("json patch v1alpha4: %d %s", code, body)
	}

	_, body = g.do("GET", vms+"/my-vm", adminToken, nil)
	hub = decode(t, body)
	if !reflect.DeepEqual(field(hub, "spec", "hardware", "ideControllers"), ide) {
		t.Errorf("IDE controllers after v1alpha4 writes = %v, want %v", field(hub, "spec", "hardware", "ideControllers"), ide)
	}
	if field(hub, "metadata", "labels", "tier") != "db" || field(hub, "metadata", "generation") != float64(3) {
		t.Errorf("stored after v1alpha4 writes: %s", body)
	}

	// v1alpha5-only fields sent to v1alpha4 are unknown there.
	code, body = g.do("PATCH", vmsV1alpha4+"/my-vm?fieldValidation=Strict", userToken,
		`{"spec":{"policies":[{"apiVersion":"vsphere.policy.vmware.com/v1alpha1","kind":"ComputePolicy","name":"p"}]}}`,
		"Content-Type", "application/merge-patch+json")
	if code != http.StatusUnprocessableEntity || !strings.Contains(string(body), "spec.policies") {
		t.Errorf("v1alpha5-only field through v1alpha4: want 422 naming spec.policies, got %d %s", code, body)
	}
	code, body, header := g.doHeader("POST", vmsV1alpha4, userToken,
		strings.Replace(upstreamExampleVM, "name: my-vm\n", "name: my-vm-2\n", 1)+"  hardware: {}\n", "Content-Type", "application/yaml")
	if code != http.StatusCreated || !strings.Contains(header.Get("Warning"), `unknown field \"spec.hardware\"`) {
		t.Errorf("v1alpha5-only field under the default fieldValidation=Warn: %d %s, Warning %q", code, body, header.Get("Warning"))
	}

	// The v1alpha5 document must still be rejected on the v1alpha4 URL and vice versa.
	if code, body := g.do("POST", vmsV1alpha4, userToken, minimalVM, "Content-Type", "application/yaml"); code != http.StatusBadRequest {
		t.Errorf("v1alpha5 body on the v1alpha4 URL: %d %s", code, body)
	}

	// Tables and deletes answer in the addressed version too.
	code, body = g.do("GET", vmsV1alpha4, userToken, nil, "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	if code != http.StatusOK || !strings.Contains(string(body), `"kind":"Table"`) || !strings.Contains(string(body), "my-vm") {
		t.Errorf("table v1alpha4: %d %s", code, body)
	}
	code, body = g.do("DELETE", vmsV1alpha4+"/my-vm", userToken, nil)
	if code != http.StatusOK {
		t.Fatalf("delete v1alpha4: %d %s", code, body)
	}
	checkV1alpha4(t, "delete response", decode(t, body))
}

// checkV1alpha4 asserts obj is in the v1alpha4 form: its apiVersion, and no field that
// only v1alpha5 has.
func checkV1alpha4(t *testing.T, what string, obj map[string]any) {
	t.Helper()
	if obj["apiVersion"] != "vmoperator.vmware.com/v1alpha4" {
		t.Errorf("%s: apiVersion %v", what, obj["apiVersion"])
	}
	for _, f := range []string{"hardware", "policies", "currentSnapshotName"} {
		if field(obj, "spec", f) != nil {
			t.Errorf("%s: v1alpha4 object has spec.%s", what, f)
		}
	}
}
