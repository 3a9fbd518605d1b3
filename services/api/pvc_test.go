package api_test

import (
	"net/http"
	"slices"
	"testing"
)

func claimBody(name, class, size string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "PersistentVolumeClaim",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"accessModes":      []any{"ReadWriteOnce"},
			"storageClassName": class,
			"resources":        map[string]any{"requests": map[string]any{"storage": size}},
		},
	}
}

// A claim is admitted with its defaults (Filesystem, the pvc-protection finalizer); a bad
// one is refused with its field error and stores nothing; a deleted claim waits for storage
// to release it.
func TestClaimAdmission(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	sc := map[string]any{
		"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": map[string]any{"name": "gold"},
		"provisioner": "csi.vsphere.vmware.com", "parameters": map[string]any{"storagePolicyID": "policy-1"},
	}
	if code, body := g.do("POST", "/apis/storage.k8s.io/v1/storageclasses", adminToken, sc); code != http.StatusCreated {
		t.Fatalf("create storage class: %d %s", code, body)
	}

	before := specCount(t, js)
	for _, bad := range []struct {
		body  map[string]any
		field string
	}{
		{claimBody("c1", "silver", "8Gi"), "spec.storageClassName"},
		{claimBody("c2", "gold", "8Zi"), "spec.resources.requests[storage]"},
		{claimBody("c3", "gold", "0"), "spec.resources.requests[storage]"},
	} {
		code, body := g.do("POST", claims, userToken, bad.body)
		st := decode(t, body)
		causes, _ := field(st, "details", "causes").([]any)
		if code != http.StatusUnprocessableEntity || !slices.ContainsFunc(causes, func(c any) bool { return c.(map[string]any)["field"] == bad.field }) {
			t.Errorf("bad claim: %d %s, want 422 with a cause at %s", code, body, bad.field)
		}
	}
	if after := specCount(t, js); after != before {
		t.Errorf("refused claims changed SPECS: %d records, want %d", after, before)
	}

	code, body := g.do("POST", claims, userToken, claimBody("data", "gold", "8Gi"))
	if code != http.StatusCreated {
		t.Fatalf("create claim: %d %s", code, body)
	}
	obj := decode(t, body)
	if got := field(obj, "spec", "volumeMode"); got != "Filesystem" {
		t.Errorf("volumeMode %v, want the default Filesystem", got)
	}
	if got, _ := field(obj, "metadata", "finalizers").([]any); !slices.Contains(got, any("kubernetes.io/pvc-protection")) {
		t.Errorf("finalizers %v, want kubernetes.io/pvc-protection", got)
	}
	code, body = g.do("DELETE", claims+"/data", userToken, nil)
	if code != http.StatusOK || field(decode(t, body), "metadata", "deletionTimestamp") == nil {
		t.Errorf("delete claim: %d %s, want 200 and the claim kept, deleting, until storage releases it", code, body)
	}
	if code, _ := g.do("GET", claims+"/data", userToken, nil); code != http.StatusOK {
		t.Errorf("a deleted claim storage has not released: GET %d, want 200", code)
	}
}
