package inventory

import (
	"github.com/vmop/vmop/pkg/model"

	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmware/govmomi/pbm"
	"github.com/vmware/govmomi/vapi/library"
	"sigs.k8s.io/yaml"
)

func loadObjects(t *testing.T) []map[string]any {
	t.Helper()
	objs, err := Objects(testContext(t), seeded.client, seeded.sim.URL.User)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// field walks nested maps; nil when a step is missing.
func field(o map[string]any, path ...string) any {
	var v any = o
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func str(o map[string]any, path ...string) string {
	s, _ := field(o, path...).(string)
	return s
}

func findObject(objs []map[string]any, kind, namespace, name string) map[string]any {
	for _, o := range objs {
		if o["kind"] == kind && str(o, "metadata", "namespace") == namespace && str(o, "metadata", "name") == name {
			return o
		}
	}
	return nil
}

// findImage finds the image of a display name visible in namespace (its own images, then the
// cluster's).
func findImage(objs []map[string]any, namespace, displayName string) map[string]any {
	for _, o := range objs {
		if str(o, "status", "name") != displayName {
			continue
		}
		if o["kind"] == "VirtualMachineImage" && str(o, "metadata", "namespace") == namespace ||
			o["kind"] == "ClusterVirtualMachineImage" {
			return o
		}
	}
	return nil
}

func TestObjectsHaveTheNamesTheSeedDocumentUses(t *testing.T) {
	objs := loadObjects(t)
	type ref struct{ kind, namespace, name string }
	want := []ref{
		{"Namespace", "", "default"},
		{"Namespace", "", "my-namespace"},
		{"Namespace", "", "my-namespace-1"},
		{"StorageClass", "", "my-storage-class"},
		{"StorageClass", "", "my-encrypted-storage-class"},
	}
	for _, ns := range []string{"default", "my-namespace", "my-namespace-1"} {
		want = append(want,
			ref{"VirtualMachineImage", ns, "vmi-0a0044d7c690bcbea"},
			ref{"VirtualMachineClass", ns, "my-vm-class"},
			ref{"VirtualMachineClass", ns, "best-effort-small"},
			ref{"EncryptionClass", ns, "my-encryption-class"},
			ref{"ComputePolicy", ns, "my-compute-policy"},
			ref{"ComputePolicy", ns, "namespace-default-policy"},
			ref{"TagPolicy", ns, "my-compute-policy"},
		)
	}
	for _, r := range want {
		t.Run(r.kind+"/"+r.namespace+"/"+r.name, func(t *testing.T) {
			if findObject(objs, r.kind, r.namespace, r.name) == nil {
				t.Errorf("no %s %s/%s", r.kind, r.namespace, r.name)
			}
		})
	}

	// imageName values of the seed document that are display names.
	for _, name := range []string{"ubuntu-22.04", "my-image", "multi-disk-image"} {
		for _, ns := range Namespaces {
			if findImage(objs, ns, name) == nil {
				t.Errorf("image display name %q does not resolve in namespace %s", name, ns)
			}
		}
	}
}

func TestObjectsAreWellFormedAndUnique(t *testing.T) {
	objs := loadObjects(t)
	clusterScoped := map[string]bool{"Namespace": true, "StorageClass": true, "ClusterVirtualMachineImage": true}
	seen := map[string]bool{}
	for _, o := range objs {
		kind, ns, name := str(o, "kind"), str(o, "metadata", "namespace"), str(o, "metadata", "name")
		id := kind + " " + ns + "/" + name
		if str(o, "apiVersion") == "" || kind == "" || name == "" {
			t.Errorf("%s: apiVersion, kind and metadata.name are required: %v", id, o)
		}
		if clusterScoped[kind] != (ns == "") || (ns != "" && !slices.Contains(Namespaces, ns)) {
			t.Errorf("%s: wrong scope", id)
		}
		if seen[id] {
			t.Errorf("%s: duplicate", id)
		}
		seen[id] = true
		if _, err := json.Marshal(o); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
}

func TestSeedClassIsTheSeedDocumentExample(t *testing.T) {
	raw, err := os.ReadFile("testdata/my-vm-class.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := yaml.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	objs := loadObjects(t)
	for _, ns := range Namespaces {
		o := findObject(objs, "VirtualMachineClass", ns, SeedClassName)
		if o == nil {
			t.Fatalf("no %s in %s", SeedClassName, ns)
		}
		got := jsonRoundTrip(t, o)
		if diff := cmp.Diff(want["spec"], got["spec"]); diff != "" {
			t.Errorf("%s/%s spec (-seed document +got):\n%s", ns, SeedClassName, diff)
		}
		if got["apiVersion"] != want["apiVersion"] || got["kind"] != want["kind"] {
			t.Errorf("%s/%s is %v %v, want %v %v", ns, SeedClassName, got["apiVersion"], got["kind"], want["apiVersion"], want["kind"])
		}
	}
}

// jsonRoundTrip gives the object as a client decodes it (numbers as float64).
func jsonRoundTrip(t *testing.T, o map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestImageStatus(t *testing.T) {
	objs := loadObjects(t)
	disk := func(name, limit, requested string, unit int) map[string]any {
		return map[string]any{"name": name, "limit": limit, "requested": requested,
			"controllerType": "SCSI", "controllerBusNumber": float64(0), "unitNumber": float64(unit)}
	}
	tests := []struct {
		namespace, display string
		kind, objectName   string // objectName "" = derived from the item ID
		typ, firmware      string
		hardwareVersion    float64
		disks              []any
		labels             map[string]any
	}{
		{
			namespace: "my-namespace", display: PhotonImage, kind: "VirtualMachineImage", objectName: SeedImageName,
			typ: "OVF", firmware: "efi", hardwareVersion: 19,
			disks: []any{disk("vmdisk1", "20Gi", "1Gi", 0)},
			labels: map[string]any{
				"image.vmoperator.vmware.com/type":                  "OVF",
				"capability.image.vmoperator.vmware.com/cloud-init": "true",
				"os.image.vmoperator.vmware.com/id":                 "36",
				"os.image.vmoperator.vmware.com/type":               "vmwarePhoton64Guest",
				"os.image.vmoperator.vmware.com/version":            "5",
			},
		},
		{
			namespace: "default", display: MultiDiskImage, kind: "VirtualMachineImage",
			typ: "OVF", firmware: "efi", hardwareVersion: 19,
			disks: []any{disk("vmdisk1", "20Gi", "1Gi", 0), disk("vmdisk2", "50Gi", "64Mi", 1)},
		},
		{
			namespace: "default", display: MyImage, kind: "VirtualMachineImage",
			typ: "OVF", firmware: "bios", hardwareVersion: 17,
			disks: []any{disk("vmdisk1", "20Gi", "512Mi", 0)},
		},
		{
			namespace: "my-namespace", display: UbuntuImage, kind: "ClusterVirtualMachineImage",
			typ: "OVF", firmware: "bios", hardwareVersion: 19,
			disks: []any{disk("vmdisk1", "10Gi", "768Mi", 0)},
		},
		{
			namespace: "default", display: PhotonISO, kind: "VirtualMachineImage", typ: "ISO",
			labels: map[string]any{"image.vmoperator.vmware.com/type": "ISO"},
		},
		{namespace: "default", display: UbuntuISO, kind: "ClusterVirtualMachineImage", typ: "ISO"},
		{
			namespace: "default", display: PhotonVMTX, kind: "VirtualMachineImage", typ: "VM",
			labels: map[string]any{"image.vmoperator.vmware.com/type": "VM"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.display, func(t *testing.T) {
			o := findImage(objs, tt.namespace, tt.display)
			if o == nil {
				t.Fatalf("no image %q in %s", tt.display, tt.namespace)
			}
			got := jsonRoundTrip(t, o)
			if got["kind"] != tt.kind {
				t.Errorf("kind = %v, want %s", got["kind"], tt.kind)
			}
			name := str(got, "metadata", "name")
			if tt.objectName != "" && name != tt.objectName {
				t.Errorf("name = %s, want %s", name, tt.objectName)
			}
			if tt.objectName == "" && (len(name) != len("vmi-")+17 || name[:4] != "vmi-") {
				t.Errorf("name = %s, want vmi- and 17 hex characters", name)
			}
			status := got["status"].(map[string]any)
			if status["type"] != tt.typ || str(got, "status", "firmware") != tt.firmware {
				t.Errorf("type %v firmware %v, want %s %s", status["type"], status["firmware"], tt.typ, tt.firmware)
			}
			if hv, _ := status["hardwareVersion"].(float64); hv != tt.hardwareVersion {
				t.Errorf("hardwareVersion = %v, want %v", status["hardwareVersion"], tt.hardwareVersion)
			}
			disks, _ := status["disks"].([]any)
			if diff := cmp.Diff(tt.disks, disks); diff != "" {
				t.Errorf("disks (-want +got):\n%s", diff)
			}
			if tt.labels != nil {
				if diff := cmp.Diff(tt.labels, field(got, "metadata", "labels")); diff != "" {
					t.Errorf("labels (-want +got):\n%s", diff)
				}
			}
			conds, _ := status["conditions"].([]any)
			if len(conds) != 1 || field(conds[0].(map[string]any), "status") != "True" || str(conds[0].(map[string]any), "type") != "Ready" {
				t.Errorf("conditions = %v, want Ready=True", conds)
			}
			// vcsim gives a VM template item no content version.
			if id := str(got, "status", "providerItemID"); id == "" || strings.HasPrefix(id, "vm-") ||
				(tt.typ != "VM" && str(got, "status", "providerContentVersion") == "") ||
				str(got, "spec", "providerRef", "kind") != "ContentLibraryItem" && tt.kind == "VirtualMachineImage" ||
				str(got, "spec", "providerRef", "name") == "" {
				t.Errorf("provider fields missing: spec %v status %v", got["spec"], status)
			}
		})
	}
}

// TestDisplayNamesResolveUniquely: api-rules §9.2 rejects an imageName that matches a display name
// in both scopes, so every display name must be visible once per namespace.
func TestDisplayNamesResolveUniquely(t *testing.T) {
	objs := loadObjects(t)
	for _, ns := range Namespaces {
		count := map[string]int{}
		for _, o := range objs {
			if o["kind"] == "ClusterVirtualMachineImage" ||
				o["kind"] == "VirtualMachineImage" && str(o, "metadata", "namespace") == ns {
				count[str(o, "status", "name")]++
			}
		}
		if want := len(images) + len(vmTemplates) + len(vmTemplateItems); len(count) != want {
			t.Errorf("%s sees %d display names, want %d: %v", ns, len(count), want, count)
		}
		for name, n := range count {
			if n != 1 {
				t.Errorf("%s: display name %q matches %d images", ns, name, n)
			}
		}
	}
}

func TestStorageClassesNameRealPolicies(t *testing.T) {
	ctx := testContext(t)
	objs := loadObjects(t)
	pc, err := pbm.NewClient(ctx, seeded.client.Client)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name      string
		encrypted bool
	}{
		{"my-storage-class", false},
		{"my-encrypted-storage-class", true},
	} {
		o := findObject(objs, "StorageClass", "", tt.name)
		id := str(o, "parameters", "storagePolicyID")
		if id == "" {
			t.Errorf("%s: no storagePolicyID", tt.name)
			continue
		}
		if _, err := pc.GetProfileNameByID(ctx, id); err != nil {
			t.Errorf("%s: policy %s unknown to PBM: %v", tt.name, id, err)
		}
		// vcsim's PBM knows I/O filters only for "VM Encryption Policy" and faults ("Invalid
		// profile ID") for any other profile, which callers must read as "no encryption".
		encrypted, err := pc.SupportsEncryption(ctx, id)
		if encrypted != tt.encrypted || (tt.encrypted && err != nil) {
			t.Errorf("%s: encryption = %v (%v), want %v", tt.name, encrypted, err, tt.encrypted)
		}
		if labelled := str(o, "metadata", "labels", model.EncryptionEnabledLabel) == "true"; labelled != tt.encrypted {
			t.Errorf("%s: encryption label %v, want %v", tt.name, labelled, tt.encrypted)
		}
	}
}

func TestObjectsAreStable(t *testing.T) {
	if diff := cmp.Diff(loadObjects(t), loadObjects(t)); diff != "" {
		t.Errorf("two reads differ (-first +second):\n%s", diff)
	}
}

// A library item that is no image (not OVF, ISO or VM template: a plain file) makes no
// VirtualMachineImage, and no providerRef finds it.
func TestPlainItemIsNoImage(t *testing.T) {
	ctx := testContext(t)
	rc, err := vapiSession(ctx, seeded.client, seeded.sim.URL.User)
	if err != nil {
		t.Fatal(err)
	}
	defer closeVAPISession(rc)
	m := library.NewManager(rc)
	ids, err := m.FindLibrary(ctx, library.Find{Name: Library.Name, Type: "LOCAL"})
	if err != nil || len(ids) != 1 {
		t.Fatalf("library %s: %v, %v", Library.Name, ids, err)
	}
	const name = "release-notes"
	id, err := m.CreateLibraryItem(ctx, library.Item{Name: name, Type: "file", LibraryID: ids[0]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.DeleteLibraryItem(context.WithoutCancel(ctx), &library.Item{ID: id}); err != nil {
			t.Error(err)
		}
	})
	for _, o := range loadObjects(t) {
		if str(o, "status", "name") == name {
			t.Errorf("%s %s made of the file item", o["kind"], str(o, "metadata", "name"))
		}
	}
	if _, found, err := ImageStatus(ctx, rc, "ContentLibraryItem", providerName(Library, name)); found || err != nil {
		t.Errorf("status of the file item: found %v, %v; want not found", found, err)
	}
}
