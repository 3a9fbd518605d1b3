package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// As in Kubernetes, a StorageClass's provisioner, parameters, reclaim policy and binding
// mode are fixed once it exists (422 naming the field, nothing stored); the rest may
// change. Volumes are kept or deleted by what their class said when they were made.
func TestStorageClassKeepsWhatItsVolumesWereMadeBy(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	const path = "/apis/storage.k8s.io/v1/storageclasses"
	if code, body := g.do("POST", path, adminToken, storageClass, "Content-Type", "application/yaml"); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	for _, tt := range []struct{ patch, field string }{
		{`{"reclaimPolicy":"Retain"}`, "reclaimPolicy"},
		{`{"parameters":{"storagePolicyID":"another"}}`, "parameters"},
		{`{"volumeBindingMode":"WaitForFirstConsumer"}`, "volumeBindingMode"},
		{`{"provisioner":"example.com/other"}`, "provisioner"},
	} {
		code, body := g.do("PATCH", path+"/my-storage-class", adminToken, tt.patch, "Content-Type", "application/merge-patch+json")
		if code != http.StatusUnprocessableEntity || !strings.Contains(string(body), tt.field+": Forbidden") {
			t.Errorf("patch %s: %d %s, want 422 Forbidden on %s", tt.patch, code, body, tt.field)
		}
	}
	if code, body := g.do("PATCH", path+"/my-storage-class", adminToken, `{"allowVolumeExpansion":true,"metadata":{"labels":{"tier":"gold"}}}`,
		"Content-Type", "application/merge-patch+json"); code != http.StatusOK {
		t.Errorf("patch of what may change: %d %s, want 200", code, body)
	}
}
