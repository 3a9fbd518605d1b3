package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// A write naming another uid than the object's is refused, as by kube-apiserver: a PUT
// (a manifest saved from an earlier incarnation) is a failed precondition, 409; a patch
// changing it, 422. Nothing is stored.
func TestWriteWithAnotherUIDIsRefused(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	if code, body := g.do("POST", classes, adminToken, seedClass, "Content-Type", "application/yaml"); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	code, body := g.do("GET", classes+"/my-vm-class", adminToken, nil)
	if code != http.StatusOK {
		t.Fatalf("get: %d %s", code, body)
	}
	obj := decode(t, body)
	obj["metadata"].(map[string]any)["uid"] = "another-incarnation"
	delete(obj["metadata"].(map[string]any), "resourceVersion")
	before := specCount(t, js)
	if code, body := g.do("PUT", classes+"/my-vm-class", adminToken, obj); code != http.StatusConflict ||
		!strings.Contains(string(body), "Precondition failed: UID in precondition: another-incarnation") {
		t.Errorf("PUT with another uid: %d %s, want 409 Precondition failed", code, body)
	}
	if code, body := g.do("PATCH", classes+"/my-vm-class", adminToken, `{"metadata":{"uid":"another-incarnation","labels":{"a":"b"}}}`,
		"Content-Type", "application/merge-patch+json"); code != http.StatusUnprocessableEntity || !strings.Contains(string(body), "metadata.uid") {
		t.Errorf("patch of the uid: %d %s, want 422 on metadata.uid", code, body)
	}
	if after := specCount(t, js); after != before {
		t.Errorf("SPECS grew from %d to %d messages on refused writes", before, after)
	}
}
