package openapi

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
)

func decodeDoc(t *testing.T, data []byte) obj {
	t.Helper()
	var d obj
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("document is not JSON: %v", err)
	}
	return d
}

// dig follows keys through nested objects; it fails the test on a missing key.
func dig(t *testing.T, v any, keys ...string) any {
	t.Helper()
	for i, k := range keys {
		m, ok := v.(obj)
		if !ok {
			t.Fatalf("%s is not an object", strings.Join(keys[:i], "."))
		}
		if v, ok = m[k]; !ok {
			t.Fatalf("no %q under %s", k, strings.Join(keys[:i], "."))
		}
	}
	return v
}

func paramNames(op obj) []string {
	var names []string
	for _, p := range op["parameters"].([]any) {
		names = append(names, p.(obj)["name"].(string))
	}
	return names
}

func vmGVK() obj {
	return obj{"group": "vmoperator.vmware.com", "version": "v1alpha5", "kind": "VirtualMachine"}
}

const (
	vmDef      = "com.vmware.vmoperator.v1alpha5.VirtualMachine"
	vmItemPath = "/apis/vmoperator.vmware.com/v1alpha5/namespaces/{namespace}/virtualmachines/{name}"
)

func TestDefinitionName(t *testing.T) {
	tests := []struct{ group, version, kind, want string }{
		{"vmoperator.vmware.com", "v1alpha5", "VirtualMachine", "com.vmware.vmoperator.v1alpha5.VirtualMachine"},
		{"vsphere.policy.vmware.com", "v1alpha1", "ComputePolicy", "com.vmware.policy.vsphere.v1alpha1.ComputePolicy"},
		{"storage.k8s.io", "v1", "StorageClass", "io.k8s.api.storage.v1.StorageClass"},
		{"", "v1", "Namespace", "io.k8s.api.core.v1.Namespace"},
	}
	for _, tt := range tests {
		if got := definitionName(tt.group, tt.version, tt.kind); got != tt.want {
			t.Errorf("definitionName(%q, %q, %q) = %q, want %q", tt.group, tt.version, tt.kind, got, tt.want)
		}
	}
}

func TestV2Document(t *testing.T) {
	d := decodeDoc(t, V2())
	if d["swagger"] != "2.0" {
		t.Errorf("swagger = %v, want 2.0", d["swagger"])
	}
	vm := dig(t, d, "definitions", vmDef).(obj)
	if diff := cmp.Diff([]any{vmGVK()}, vm["x-kubernetes-group-version-kind"]); diff != "" {
		t.Errorf("VirtualMachine GVK (-want +got):\n%s", diff)
	}
	desc := dig(t, vm, "properties", "spec", "properties", "powerState", "description").(string)
	if !strings.Contains(desc, "power state") {
		t.Errorf("spec.powerState description = %q", desc)
	}
	if _, ok := dig(t, vm, "properties", "spec", "properties", "advanced", "properties", "bootDiskCapacity").(obj)["anyOf"]; ok {
		t.Errorf("v2 int-or-string has anyOf, which Swagger 2.0 does not allow")
	}
	for _, k := range servedKinds() {
		for _, name := range []string{definitionName(k.Group, k.Version, k.Kind), definitionName(k.Group, k.Version, k.ListKind)} {
			dig(t, d, "definitions", name)
		}
	}
	patch := dig(t, d, "paths", vmItemPath, "patch").(obj)
	if diff := cmp.Diff([]any{"application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"}, patch["consumes"]); diff != "" {
		t.Errorf("VirtualMachine PATCH consumes (-want +got):\n%s", diff)
	}
	body := patch["parameters"].([]any)[len(patch["parameters"].([]any))-1].(obj)
	if body["in"] != "body" || dig(t, body, "schema", "$ref") != "#/definitions/"+patchDef {
		t.Errorf("PATCH body parameter = %v", body)
	}
}

// TestWritesAnnounceFieldValidation checks what kubectl's query-param verifiers look for:
// every POST, PUT and PATCH operation carries the kind's GVK and the write parameters
// among its own parameters (path-level parameters are not consulted).
func TestWritesAnnounceFieldValidation(t *testing.T) {
	docs := map[string][]byte{"v2": V2()}
	for key := range v3Docs().docs {
		doc, _ := V3GroupVersion(key)
		docs[key] = doc
	}
	for name, data := range docs {
		ops := 0
		for path, item := range dig(t, decodeDoc(t, data), "paths").(obj) {
			for method, op := range item.(obj) {
				if method == "parameters" {
					continue
				}
				o := op.(obj)
				ops++
				g, ok := o["x-kubernetes-group-version-kind"].(obj)
				if !ok || g["kind"] == "" || g["version"] == "" {
					t.Errorf("%s %s %s: no single x-kubernetes-group-version-kind", name, method, path)
				}
				if method != "post" && method != "put" && method != "patch" {
					continue
				}
				for _, want := range []string{"fieldValidation", "dryRun", "fieldManager"} {
					if !slices.Contains(paramNames(o), want) {
						t.Errorf("%s %s %s: no %s parameter", name, method, path, want)
					}
				}
			}
		}
		if ops == 0 {
			t.Errorf("%s has no operations", name)
		}
	}
}

func TestPatchTypes(t *testing.T) {
	tests := []struct {
		gv, path string
		wantSMP  bool
	}{
		{"apis/vmoperator.vmware.com/v1alpha5", vmItemPath, false},
		{"apis/vmoperator.vmware.com/v1alpha5", vmItemPath + "/status", false},
		{"apis/vsphere.policy.vmware.com/v1alpha1", "/apis/vsphere.policy.vmware.com/v1alpha1/namespaces/{namespace}/computepolicies/{name}", false},
		{"apis/storage.k8s.io/v1", "/apis/storage.k8s.io/v1/storageclasses/{name}", true},
		{"api/v1", "/api/v1/namespaces/{namespace}/persistentvolumeclaims/{name}", true},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			doc, ok := V3GroupVersion(tt.gv)
			if !ok {
				t.Fatalf("no document for %s", tt.gv)
			}
			content := dig(t, decodeDoc(t, doc), "paths", tt.path, "patch", "requestBody", "content").(obj)
			if _, ok := content["application/merge-patch+json"]; !ok {
				t.Errorf("PATCH lacks application/merge-patch+json: %v", content)
			}
			if _, smp := content["application/strategic-merge-patch+json"]; smp != tt.wantSMP {
				t.Errorf("PATCH offers strategic merge patch = %v, want %v", smp, tt.wantSMP)
			}
		})
	}
}

func TestV3Root(t *testing.T) {
	root := decodeDoc(t, V3Root())
	paths := dig(t, root, "paths").(obj)
	var want []string
	for _, k := range servedKinds() {
		key := "apis/" + k.Group + "/" + k.Version
		if k.Group == "" {
			key = "api/v1"
		}
		if !slices.Contains(want, key) {
			want = append(want, key)
		}
	}
	var got []string
	for key, entry := range paths {
		got = append(got, key)
		doc, ok := V3GroupVersion(key)
		if !ok {
			t.Errorf("root lists %s but V3GroupVersion has no document", key)
			continue
		}
		hash := fmt.Sprintf("%X", sha512.Sum512(doc))
		wantURL := "/openapi/v3/" + key + "?hash=" + hash
		if url := dig(t, entry, "serverRelativeURL"); url != wantURL {
			t.Errorf("%s serverRelativeURL = %v, want %s", key, url, wantURL)
		}
		if V3Hash(key) != hash || V3Hash("/openapi/v3/"+key) != hash {
			t.Errorf("V3Hash(%s) = %q, want %q", key, V3Hash(key), hash)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("root paths (-want +got):\n%s", diff)
	}
}

func TestV3GroupVersion(t *testing.T) {
	for _, path := range []string{"apis/vmoperator.vmware.com/v1alpha5", "/apis/vmoperator.vmware.com/v1alpha5", "/openapi/v3/apis/vmoperator.vmware.com/v1alpha5"} {
		if _, ok := V3GroupVersion(path); !ok {
			t.Errorf("V3GroupVersion(%q) found nothing", path)
		}
	}
	for _, path := range []string{"apis/vmoperator.vmware.com/v1", "apis/apps/v1", ""} {
		if _, ok := V3GroupVersion(path); ok {
			t.Errorf("V3GroupVersion(%q) found a document", path)
		}
	}

	doc, _ := V3GroupVersion("apis/vmoperator.vmware.com/v1alpha5")
	d := decodeDoc(t, doc)
	if d["openapi"] != "3.0.0" {
		t.Errorf("openapi = %v, want 3.0.0", d["openapi"])
	}
	vm := dig(t, d, "components", "schemas", vmDef).(obj)
	if diff := cmp.Diff([]any{vmGVK()}, vm["x-kubernetes-group-version-kind"]); diff != "" {
		t.Errorf("VirtualMachine GVK (-want +got):\n%s", diff)
	}
	capacity := dig(t, vm, "properties", "spec", "properties", "advanced", "properties", "bootDiskCapacity").(obj)
	if diff := cmp.Diff([]any{obj{"type": "integer"}, obj{"type": "string"}}, capacity["anyOf"]); diff != "" {
		t.Errorf("quantity anyOf (-want +got):\n%s", diff)
	}
	if _, ok := dig(t, d, "components", "schemas").(obj)["io.k8s.api.storage.v1.StorageClass"]; ok {
		t.Errorf("the vmoperator document holds another group's kind")
	}
	wantPaths := []string{
		"/apis/vmoperator.vmware.com/v1alpha5/namespaces/{namespace}/virtualmachines",
		vmItemPath,
		vmItemPath + "/status",
		"/apis/vmoperator.vmware.com/v1alpha5/virtualmachines",
		"/apis/vmoperator.vmware.com/v1alpha5/clustervirtualmachineimages",
		"/apis/vmoperator.vmware.com/v1alpha5/clustervirtualmachineimages/{name}",
	}
	for _, p := range wantPaths {
		dig(t, d, "paths", p)
	}
	for _, name := range []string{"namespace", "name", "pretty"} {
		if !slices.Contains(paramNames(dig(t, d, "paths", vmItemPath).(obj)), name) {
			t.Errorf("VM item path lacks the shared %s parameter", name)
		}
	}
	if got := dig(t, d, "paths", vmItemPath, "get", "x-kubernetes-group-version-kind"); !cmp.Equal(got, vmGVK()) {
		t.Errorf("GET GVK = %v, want %v", got, vmGVK())
	}
}

func TestV2ProtobufDecodes(t *testing.T) {
	var doc openapi_v2.Document
	if err := proto.Unmarshal(V2Protobuf(), &doc); err != nil {
		t.Fatalf("V2Protobuf does not decode: %v", err)
	}
	var names []string
	for _, d := range doc.GetDefinitions().GetAdditionalProperties() {
		names = append(names, d.GetName())
	}
	if !slices.Contains(names, vmDef) {
		t.Errorf("protobuf definitions lack %s", vmDef)
	}
	if got, want := len(doc.GetPaths().GetPath()), len(dig(t, decodeDoc(t, V2()), "paths").(obj)); got != want {
		t.Errorf("protobuf has %d paths, JSON %d", got, want)
	}
}

func TestV2For(t *testing.T) {
	tests := []struct {
		accept, want string
	}{
		{"application/com.github.proto-openapi.spec.v2@v1.0+protobuf", V2ProtobufContentType},
		{"application/com.github.proto-openapi.spec.v2.v1.0+protobuf", V2ProtobufContentType},
		{"application/json, application/com.github.proto-openapi.spec.v2@v1.0+protobuf", "application/json"},
		{"application/com.github.proto-openapi.spec.v2@v1.0+protobuf;q=0.9, application/json", V2ProtobufContentType},
		{"", "application/json"},
		{"*/*", "application/json"},
	}
	for _, tt := range tests {
		doc, ct := V2For(tt.accept)
		if ct != tt.want {
			t.Errorf("V2For(%q) content type = %q, want %q", tt.accept, ct, tt.want)
		}
		wantDoc := V2()
		if ct == V2ProtobufContentType {
			wantDoc = V2Protobuf()
		}
		if string(doc) != string(wantDoc) {
			t.Errorf("V2For(%q) returned the wrong encoding", tt.accept)
		}
	}
}

func TestDocumentsAreDeterministic(t *testing.T) {
	again, err := buildV2()
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(V2()) {
		t.Errorf("two v2 builds differ")
	}
	set, err := buildV3()
	if err != nil {
		t.Fatal(err)
	}
	if string(set.root) != string(V3Root()) {
		t.Errorf("two v3 builds differ")
	}
}

// Built-in kinds publish their Go types' patch strategies, so kubectl computes strategic
// merge patches with the merge keys the gateway merges by; custom kinds publish none.
func TestPatchStrategies(t *testing.T) {
	doc, _ := V3GroupVersion("api/v1")
	meta := dig(t, decodeDoc(t, doc), "components", "schemas", "io.k8s.api.core.v1.Secret", "properties", "metadata", "properties").(obj)
	if got := dig(t, meta, "finalizers", "x-kubernetes-patch-strategy"); got != "merge" {
		t.Errorf("Secret metadata.finalizers patch strategy = %v, want merge", got)
	}
	if got := dig(t, meta, "ownerReferences", "x-kubernetes-patch-merge-key"); got != "uid" {
		t.Errorf("Secret metadata.ownerReferences merge key = %v, want uid", got)
	}
	doc, _ = V3GroupVersion("apis/vmoperator.vmware.com/v1alpha5")
	if strings.Contains(string(doc), "x-kubernetes-patch-strategy") {
		t.Errorf("a custom kind publishes patch strategies")
	}
}
