package api_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A restart of the gateway loses nothing, and a deleted read model is rebuilt from the
// streams identically (same objects, same resourceVersions).
func TestRestartAndRebuildKeepEverything(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	createClass(t, g)
	g.do("PATCH", classes+"/my-vm-class", adminToken, `{"spec":{"description":"kept"}}`, "Content-Type", "application/merge-patch+json")
	_, before := g.do("GET", "/apis/vmoperator.vmware.com/v1alpha5/virtualmachineclasses", adminToken, nil)

	g = g.restart()
	code, after := g.do("GET", "/apis/vmoperator.vmware.com/v1alpha5/virtualmachineclasses", adminToken, nil)
	if code != http.StatusOK {
		t.Fatalf("list after restart: %d %s", code, after)
	}
	if diff := cmp.Diff(decode(t, before), decode(t, after)); diff != "" {
		t.Errorf("restart changed the list (-before +after):\n%s", diff)
	}

	g = g.rebuild()
	_, rebuilt := g.do("GET", "/apis/vmoperator.vmware.com/v1alpha5/virtualmachineclasses", adminToken, nil)
	if diff := cmp.Diff(decode(t, before), decode(t, rebuilt)); diff != "" {
		t.Errorf("rebuilt read model differs (-before +rebuilt):\n%s", diff)
	}
}
