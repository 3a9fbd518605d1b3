package api_test

import (
	"github.com/vmop/vmop/pkg/events"
	"net/http"
	"strings"
	"testing"
)

// admissionInventory creates what a VirtualMachine of my-namespace refers to: the storage
// class and the photon-5 image (imageInventory), and the class.
func admissionInventory(t *testing.T, g *gateway) {
	t.Helper()
	imageInventory(t, g)
	if code, body := g.do("POST", classes, adminToken, seedClass, "Content-Type", "application/yaml"); code != http.StatusCreated {
		t.Fatalf("create class: %d %s", code, body)
	}
}

// imageInventory creates the storage class and the photon-5 image with its display name
// (status, which only services write).
func imageInventory(t *testing.T, g *gateway) {
	t.Helper()
	for _, o := range []struct{ path, body string }{
		{"/apis/storage.k8s.io/v1/storageclasses", storageClass},
		{images, photonImage},
	} {
		if code, body := g.do("POST", o.path, adminToken, o.body, "Content-Type", "application/yaml"); code != http.StatusCreated {
			t.Fatalf("create %s: %d %s", o.path, code, body)
		}
	}
	if code, body := g.do("PUT", images+"/vmi-0a0044d7c690bcbea/status", serviceToken,
		strings.Replace(photonImage, "metadata:\n", "metadata:\n  namespace: my-namespace\n", 1), "Content-Type", "application/yaml"); code != http.StatusOK {
		t.Fatalf("write image status: %d %s", code, body)
	}
}

// createMinimalVM creates minimalVM as the user (after imageInventory) and returns the
// stored object.
func createMinimalVM(t *testing.T, g *gateway) []byte {
	t.Helper()
	code, body := g.do("POST", vms, userToken, minimalVM, "Content-Type", "application/yaml")
	if code != http.StatusCreated {
		t.Fatalf("create VM: %d %s", code, body)
	}
	return body
}

// A dry-run create runs the whole chain and answers with the defaulted object, storing
// nothing.
func TestDryRunCreateReturnsDefaultedObject(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	admissionInventory(t, g)
	before := specCount(t, js)

	code, body := g.do("POST", vms+"?dryRun=All", userToken, minimalVM, "Content-Type", "application/yaml")
	if code != http.StatusCreated {
		t.Fatalf("dry-run create: %d %s", code, body)
	}
	vm := decode(t, body)
	for _, c := range []struct {
		path []string
		want any
	}{
		{[]string{"spec", "powerState"}, "PoweredOn"},
		{[]string{"spec", "image", "name"}, "vmi-0a0044d7c690bcbea"},
		{[]string{"metadata", "generation"}, float64(1)},
	} {
		if got := field(vm, c.path...); got != c.want {
			t.Errorf("%s = %v, want %v", strings.Join(c.path, "."), got, c.want)
		}
	}
	if s, _ := field(vm, "spec", "biosUUID").(string); len(s) != 36 {
		t.Errorf("spec.biosUUID = %q, want a defaulted UUID", s)
	}
	if after := specCount(t, js); after != before {
		t.Errorf("SPECS grew from %d to %d messages on a dry run", before, after)
	}
	if code, _ := g.do("GET", vms+"/my-vm", userToken, nil); code != http.StatusNotFound {
		t.Errorf("GET after a dry-run create: %d, want 404", code)
	}
}

// A dry run of an invalid object fails exactly as the real request does: same code, same
// field errors.
func TestDryRunRejectsLikeTheRealRequest(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	admissionInventory(t, g)
	tests := []struct {
		name, body string
		wantCode   int
		wantInMsg  string
	}{
		{"stage 1 schema enum", strings.Replace(minimalVM, "  imageName: photon-5\n", "  imageName: photon-5\n  powerState: Sleeping\n", 1),
			http.StatusUnprocessableEntity, `spec.powerState: Unsupported value: "Sleeping"`},
		{"stage 2 D8 non-privileged BIOS UUID", strings.Replace(minimalVM, "  imageName: photon-5\n", "  imageName: photon-5\n  biosUUID: 1b1e1a2c-4e59-4b7b-a9f1-0f6b5a0c9d11\n", 1),
			http.StatusForbidden, "spec.biosUUID: Forbidden"},
		{"stage 3 PWR-1 Suspended on create", strings.Replace(minimalVM, "  imageName: photon-5\n", "  imageName: photon-5\n  powerState: Suspended\n", 1),
			http.StatusUnprocessableEntity, "spec.powerState: Invalid value"},
	}
	before := specCount(t, js)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dryCode, dryBody := g.do("POST", vms+"?dryRun=All", userToken, tt.body, "Content-Type", "application/yaml")
			code, body := g.do("POST", vms, userToken, tt.body, "Content-Type", "application/yaml")
			if code != tt.wantCode || !strings.Contains(message(t, body), tt.wantInMsg) {
				t.Fatalf("real request: %d %s, want %d with %q", code, body, tt.wantCode, tt.wantInMsg)
			}
			if dryCode != code || message(t, dryBody) != message(t, body) {
				t.Errorf("dry run answered %d %s; the real request %d %s", dryCode, dryBody, code, body)
			}
		})
	}
	if after := specCount(t, js); after != before {
		t.Errorf("SPECS grew from %d to %d messages", before, after)
	}
}

// Dry-run updates, patches and deletes answer with the would-be result and change nothing;
// an unknown dryRun value is refused rather than ignored (which would write).
func TestDryRunUpdatePatchDeleteStoreNothing(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	admissionInventory(t, g)
	body := createMinimalVM(t, g)
	stored := decode(t, body)
	off := decode(t, body)
	off["spec"].(map[string]any)["powerState"] = "PoweredOff"
	before := specCount(t, js)

	tests := []struct {
		name, method, path, contentType string
		body                            any
		wantCode                        int
		wantPower                       string // in the response, "" = not checked
	}{
		{"PUT", "PUT", vms + "/my-vm?dryRun=All", "application/json", off, http.StatusOK, "PoweredOff"},
		{"merge patch", "PATCH", vms + "/my-vm?dryRun=All", "application/merge-patch+json", `{"spec":{"powerState":"PoweredOff"}}`, http.StatusOK, "PoweredOff"},
		{"JSON patch", "PATCH", vms + "/my-vm?dryRun=All", "application/json-patch+json", `[{"op":"replace","path":"/spec/powerState","value":"PoweredOff"}]`, http.StatusOK, "PoweredOff"},
		{"DELETE with query", "DELETE", vms + "/my-vm?dryRun=All", "application/json", nil, http.StatusOK, "PoweredOn"},
		{"DELETE with DeleteOptions body, as kubectl sends it", "DELETE", vms + "/my-vm", "application/json",
			`{"kind":"DeleteOptions","apiVersion":"v1","dryRun":["All"]}`, http.StatusOK, "PoweredOn"},
		{"unknown dryRun value", "PUT", vms + "/my-vm?dryRun=true", "application/json", off, http.StatusBadRequest, ""},
		{"unknown dryRun value in DeleteOptions", "DELETE", vms + "/my-vm", "application/json", `{"dryRun":["Yes"]}`, http.StatusBadRequest, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := g.do(tt.method, tt.path, userToken, tt.body, "Content-Type", tt.contentType)
			if code != tt.wantCode {
				t.Fatalf("%d %s, want %d", code, body, tt.wantCode)
			}
			if tt.wantPower != "" {
				answer := decode(t, body)
				if got := field(answer, "spec", "powerState"); got != tt.wantPower {
					t.Errorf("response spec.powerState = %v, want %s", got, tt.wantPower)
				}
				// As kube-apiserver's: the current resourceVersion, so kubectl diff shows
				// only the change.
				if got, want := field(answer, "metadata", "resourceVersion"), field(stored, "metadata", "resourceVersion"); got != want {
					t.Errorf("response resourceVersion = %v, want the stored %v", got, want)
				}
			}
		})
	}
	if after := specCount(t, js); after != before {
		t.Errorf("SPECS grew from %d to %d messages on dry runs", before, after)
	}
	code, body := g.do("GET", vms+"/my-vm", userToken, nil)
	if code != http.StatusOK {
		t.Fatalf("GET after dry runs: %d %s", code, body)
	}
	got := decode(t, body)
	if field(got, "spec", "powerState") != "PoweredOn" || field(got, "metadata", "deletionTimestamp") != nil ||
		field(got, "metadata", "resourceVersion") != field(stored, "metadata", "resourceVersion") {
		t.Errorf("object changed by dry runs: %s", body)
	}
}

func message(t *testing.T, body []byte) string {
	t.Helper()
	msg, _ := decode(t, body)["message"].(string)
	return msg
}

// A service's dry-run status write runs its checks and publishes nothing: STATUS ends where
// it was, and the image's status is still the one written before.
func TestDryRunStatusPublishesNothing(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	imageInventory(t, g)
	head := func() uint64 {
		h, err := events.Head(t.Context(), js, events.StreamStatus)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	before := head()
	changed := strings.Replace(photonImage, "metadata:\n", "metadata:\n  namespace: my-namespace\n", 1)
	changed = strings.Replace(changed, "name: photon-5", "name: renamed-by-a-dry-run", 1)
	if code, body := g.do("PUT", images+"/vmi-0a0044d7c690bcbea/status?dryRun=All", serviceToken, changed,
		"Content-Type", "application/yaml"); code != http.StatusOK {
		t.Fatalf("dry-run status write: %d %s", code, body)
	}
	if after := head(); after != before {
		t.Errorf("STATUS went from %d to %d on a dry-run status write", before, after)
	}
	if code, body := g.do("PUT", images+"/vmi-0a0044d7c690bcbea/status?dryRun=Yes", serviceToken, changed,
		"Content-Type", "application/yaml"); code != http.StatusBadRequest {
		t.Errorf("status write with dryRun=Yes: %d %s, want 400", code, body)
	}
}

// A dry-run patch answers the object with its status as it is, as kube-apiserver does:
// kubectl diff and apply --dry-run=server show no status removed.
func TestDryRunAnswerKeepsTheStatus(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	imageInventory(t, g)
	const image = images + "/vmi-0a0044d7c690bcbea"
	code, body := g.do("GET", image, adminToken, nil)
	if code != http.StatusOK || field(decode(t, body), "status", "name") == nil {
		t.Fatalf("the image with its status: %d %s", code, body)
	}
	stored := decode(t, body)
	code, body = g.do("PATCH", image+"?dryRun=All", adminToken, `{"metadata":{"labels":{"tier":"gold"}}}`,
		"Content-Type", "application/merge-patch+json")
	if code != http.StatusOK {
		t.Fatalf("dry-run patch: %d %s", code, body)
	}
	answer := decode(t, body)
	if field(answer, "status", "name") != field(stored, "status", "name") ||
		field(answer, "metadata", "resourceVersion") != field(stored, "metadata", "resourceVersion") ||
		field(answer, "metadata", "labels", "tier") != "gold" {
		t.Errorf("dry-run patch answered %s; want the change with the stored status and resourceVersion", body)
	}
}
