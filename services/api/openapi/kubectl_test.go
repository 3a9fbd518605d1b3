package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeAPIServer serves discovery, the OpenAPI documents and a tiny object store: just
// enough for the real kubectl to explain, validate and apply.
type fakeAPIServer struct {
	*httptest.Server
	v2JSON, v2Proto []byte
	v3              func(path string) ([]byte, bool)

	mu       sync.Mutex
	objects  map[string]map[string]any // by item path
	requests []recordedRequest
}

type recordedRequest struct {
	method, path, contentType string
	query                     map[string][]string
	body                      []byte
}

func newFakeAPIServer(t *testing.T) *fakeAPIServer {
	t.Helper()
	s := &fakeAPIServer{v2JSON: V2(), v2Proto: V2Protobuf(), v3: V3GroupVersion, objects: map[string]map[string]any{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *fakeAPIServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	s.mu.Lock()
	s.requests = append(s.requests, recordedRequest{r.Method, r.URL.Path, r.Header.Get("Content-Type"), r.URL.Query(), body})
	s.mu.Unlock()
	p := r.URL.Path
	switch {
	case p == "/version":
		writeJSON(w, 200, obj{"major": "1", "minor": "32", "gitVersion": "v1.32.0"})
	case p == "/openapi/v2":
		doc, contentType := V2For(r.Header.Get("Accept"))
		if contentType == V2ProtobufContentType {
			doc = s.v2Proto
		} else {
			doc = s.v2JSON
		}
		w.Header().Set("Content-Type", contentType)
		w.Write(doc)
	case p == "/openapi/v3":
		w.Header().Set("Content-Type", "application/json")
		w.Write(V3Root())
	case strings.HasPrefix(p, "/openapi/v3/"):
		doc, ok := s.v3(p)
		if !ok {
			writeJSON(w, 404, obj{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(doc)
	case p == "/api":
		writeJSON(w, 200, obj{"kind": "APIVersions", "versions": []string{"v1"},
			"serverAddressByClientCIDRs": []obj{{"clientCIDR": "0.0.0.0/0", "serverAddress": r.Host}}})
	case p == "/apis":
		writeJSON(w, 200, groupList())
	case p == "/api/v1":
		writeJSON(w, 200, resourceList("", "v1"))
	case strings.Count(p, "/") == 3 && strings.HasPrefix(p, "/apis/"):
		parts := strings.Split(p, "/")
		writeJSON(w, 200, resourceList(parts[2], parts[3]))
	default:
		s.serveObject(w, r)
	}
}

// serveObject stores created objects and answers reads and patches with them.
func (s *fakeAPIServer) serveObject(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	switch r.Method {
	case http.MethodGet:
		o, ok := s.objects[r.URL.Path]
		if !ok {
			writeJSON(w, 404, obj{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404,
				"message": "not found", "details": obj{"name": filepath.Base(r.URL.Path)}})
			return
		}
		writeJSON(w, 200, o)
	case http.MethodPost:
		var o map[string]any
		json.Unmarshal(body, &o)
		meta := o["metadata"].(map[string]any)
		meta["uid"], meta["resourceVersion"], meta["creationTimestamp"] = "0b0e5d6c-1111-4222-8333-944445555666", "1.0", "2024-05-01T10:00:00Z"
		s.objects[r.URL.Path+"/"+meta["name"].(string)] = o
		writeJSON(w, 201, o)
	case http.MethodPatch:
		o, ok := s.objects[r.URL.Path]
		if !ok {
			writeJSON(w, 404, obj{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404})
			return
		}
		writeJSON(w, 200, o)
	default:
		writeJSON(w, 405, obj{"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 405})
	}
}

func (s *fakeAPIServer) writes() []recordedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []recordedRequest
	for _, r := range s.requests {
		if r.method == http.MethodPost || r.method == http.MethodPatch || r.method == http.MethodPut {
			out = append(out, r)
		}
	}
	return out
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func groupList() obj {
	var groups []obj
	at := map[string]int{}
	for _, k := range servedKinds() {
		gv := obj{"groupVersion": k.Group + "/" + k.Version, "version": k.Version}
		i, seen := at[k.Group]
		switch {
		case k.Group == "":
		case !seen:
			at[k.Group] = len(groups)
			groups = append(groups, obj{"name": k.Group, "versions": []obj{gv}, "preferredVersion": gv})
		case !slices.ContainsFunc(groups[i]["versions"].([]obj), func(o obj) bool { return o["version"] == k.Version }):
			groups[i]["versions"] = append(groups[i]["versions"].([]obj), gv)
		}
	}
	return obj{"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
}

func resourceList(group, version string) obj {
	resources := []obj{}
	for _, k := range servedKinds() {
		if k.Group != group || k.Version != version {
			continue
		}
		resources = append(resources, obj{"name": k.Plural, "singularName": k.Singular, "namespaced": k.Namespaced,
			"kind": k.Kind, "shortNames": k.ShortNames, "verbs": []string{"create", "delete", "get", "list", "patch", "update", "watch"}})
		if k.HasStatus {
			resources = append(resources, obj{"name": k.Plural + "/status", "singularName": "", "namespaced": k.Namespaced,
				"kind": k.Kind, "verbs": []string{"get", "patch", "update"}})
		}
	}
	gv := version
	if group != "" {
		gv = group + "/" + version
	}
	return obj{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}
}

// kubectl runs the installed kubectl against srv, skipping the test when there is none.
func kubectl(t *testing.T, srv *fakeAPIServer, stdin string, args ...string) (string, error) {
	t.Helper()
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed")
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	config := `apiVersion: v1
kind: Config
clusters: [{name: fake, cluster: {server: "` + srv.URL + `"}}]
users: [{name: tester, user: {token: test}}]
contexts: [{name: fake, context: {cluster: fake, user: tester, namespace: dev}}]
current-context: fake
`
	if err := os.WriteFile(kubeconfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(dir, "cache")}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestKubectlExplain(t *testing.T) {
	srv := newFakeAPIServer(t)
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"explain", "vm.spec.powerState"}, []string{
			"GROUP:      vmoperator.vmware.com", "KIND:       VirtualMachine", "VERSION:    v1alpha5",
			"FIELD: powerState <string>", "PoweredOn", "PowerState is the power state the VM should be in",
		}},
		{[]string{"explain", "virtualmachines"}, []string{"VirtualMachine is a virtual machine on vSphere", "spec\t<Object>", "status\t<Object>"}},
		{[]string{"explain", "vm.spec.network.interfaces.name"}, []string{"FIELD: name <string>", "Name identifies the interface"}},
		{[]string{"explain", "vmclass"}, []string{"KIND:       VirtualMachineClass"}},
		{[]string{"explain", "vm.spec.cdrom", "--api-version", "vmoperator.vmware.com/v1alpha4"}, []string{
			"VERSION:    v1alpha4", "FIELD: cdrom <[]Object>", "allowGuestControl",
		}},
		{[]string{"explain", "vm.spec.bootOptions.bootOrder", "--api-version", "vmoperator.vmware.com/v1alpha4"}, []string{
			"FIELD: bootOrder <[]string>", "Disk",
		}},
		{[]string{"explain", "pvc.spec"}, []string{"KIND:       PersistentVolumeClaim", "VERSION:    v1"}},
		{[]string{"explain", "sc", "--output", "plaintext-openapiv2"}, []string{"KIND:     StorageClass", "VERSION:  storage.k8s.io/v1", "provisioner\t<string> -required-"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, err := kubectl(t, srv, "", tt.args...)
			if err != nil {
				t.Fatalf("kubectl %s: %v\n%s", strings.Join(tt.args, " "), err, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

const applyVM = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata:
  name: web-1
spec:
  className: small
  imageName: vmi-0123456789abcdef0
  storageClass: wcpglobal
  powerState: %s
  foo: unknown-to-the-schema
`

func TestKubectlApplyUsesServerSideValidationAndMergePatch(t *testing.T) {
	srv := newFakeAPIServer(t)
	if out, err := kubectl(t, srv, strings.Replace(applyVM, "%s", "PoweredOn", 1), "apply", "-f", "-"); err != nil {
		t.Fatalf("first apply: %v\n%s", err, out)
	}
	if out, err := kubectl(t, srv, strings.Replace(applyVM, "%s", "PoweredOff", 1), "apply", "-f", "-"); err != nil {
		t.Fatalf("second apply: %v\n%s", err, out)
	}
	writes := srv.writes()
	if len(writes) != 2 {
		t.Fatalf("writes = %+v, want a create and a patch", writes)
	}
	create, patch := writes[0], writes[1]
	if create.method != http.MethodPost || create.path != "/apis/vmoperator.vmware.com/v1alpha5/namespaces/dev/virtualmachines" {
		t.Errorf("first write = %s %s, want POST to the collection", create.method, create.path)
	}
	if patch.method != http.MethodPatch || patch.contentType != "application/merge-patch+json" {
		t.Errorf("second write = %s with %q, want PATCH with application/merge-patch+json", patch.method, patch.contentType)
	}
	for _, w := range writes {
		if got := w.query["fieldValidation"]; len(got) != 1 || got[0] != "Strict" {
			t.Errorf("%s sent fieldValidation=%v, want Strict", w.method, got)
		}
	}
}

func TestKubectlApplyBuiltinKindUsesStrategicMergePatch(t *testing.T) {
	srv := newFakeAPIServer(t)
	sc := `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: gold
provisioner: csi.vsphere.vmware.com
parameters:
  storagePolicyID: %s
`
	for _, id := range []string{"a", "b"} {
		if out, err := kubectl(t, srv, strings.Replace(sc, "%s", id, 1), "apply", "-f", "-"); err != nil {
			t.Fatalf("apply: %v\n%s", err, out)
		}
	}
	writes := srv.writes()
	if len(writes) != 2 || writes[1].contentType != "application/strategic-merge-patch+json" {
		t.Errorf("writes = %+v, want a create then a strategic merge patch", writes)
	}
}

// kubectl computes a built-in kind's strategic merge patch with the patch strategies the
// documents publish, the ones the gateway merges by: a finalizer dropped from the
// configuration is sent as a $deleteFromPrimitiveList directive, not as a shorter list a
// merge by those strategies would keep the dropped entry under.
func TestKubectlApplyBuiltinKindFollowsPatchStrategies(t *testing.T) {
	srv := newFakeAPIServer(t)
	secret := `apiVersion: v1
kind: Secret
metadata:
  name: s
  finalizers: [%s]
stringData: {k: v}
`
	for _, finalizers := range []string{"example.com/a, example.com/b", "example.com/b"} {
		if out, err := kubectl(t, srv, strings.Replace(secret, "%s", finalizers, 1), "apply", "-f", "-"); err != nil {
			t.Fatalf("apply: %v\n%s", err, out)
		}
	}
	writes := srv.writes()
	if len(writes) != 2 {
		t.Fatalf("%d writes, want a create and a patch", len(writes))
	}
	if p := writes[1]; p.contentType != "application/strategic-merge-patch+json" ||
		!strings.Contains(string(p.body), `"$deleteFromPrimitiveList/finalizers":["example.com/a"]`) {
		t.Errorf("patch %s %s, want a strategic merge patch deleting example.com/a", p.contentType, p.body)
	}
}

// TestKubectlClientSideValidation shows what kubectl does when a server does not announce
// fieldValidation: it validates against the v2 definitions itself. Our documents announce
// it, so this only proves that the v2 schemas are usable for that.
func TestKubectlClientSideValidation(t *testing.T) {
	srv := newFakeAPIServer(t)
	v2, err := withoutParam(srv.v2JSON, "fieldValidation")
	if err != nil {
		t.Fatal(err)
	}
	if srv.v2Proto, err = toProtobuf(v2); err != nil {
		t.Fatal(err)
	}
	srv.v2JSON = v2
	srv.v3 = func(path string) ([]byte, bool) {
		doc, ok := V3GroupVersion(path)
		if !ok {
			return nil, false
		}
		doc, err := withoutParam(doc, "fieldValidation")
		return doc, err == nil
	}
	out, err := kubectl(t, srv, strings.Replace(applyVM, "%s", "PoweredOn", 1), "apply", "-f", "-")
	if err == nil {
		t.Fatalf("apply succeeded, want a client-side validation error:\n%s", out)
	}
	if !strings.Contains(out, `unknown field "foo"`) || !strings.Contains(out, "com.vmware.vmoperator.v1alpha5.VirtualMachine.spec") {
		t.Errorf("apply output lacks the client-side unknown field error:\n%s", out)
	}
	if len(srv.writes()) != 0 {
		t.Errorf("kubectl wrote %+v despite the validation error", srv.writes())
	}
}

// withoutParam removes a parameter from every operation of a v2 or v3 document.
func withoutParam(doc []byte, name string) ([]byte, error) {
	var d obj
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	for _, item := range d["paths"].(obj) {
		for _, op := range item.(obj) {
			o, ok := op.(obj)
			if !ok {
				continue
			}
			params, _ := o["parameters"].([]any)
			kept := []any{}
			for _, p := range params {
				if p.(obj)["name"] != name {
					kept = append(kept, p)
				}
			}
			o["parameters"] = kept
		}
	}
	return encode(d)
}
