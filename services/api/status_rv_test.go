package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/vmop/vmop/pkg/events"
)

// A status write naming the resourceVersion it was read at is a compare-and-swap, as in
// Kubernetes: at the object's current version it is stored, at a version the object has
// left it is 409 and stores nothing, a malformed one is 400; without one it is stored.
func TestStatusWriteHonoursResourceVersion(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	imageInventory(t, g)
	const image = images + "/vmi-0a0044d7c690bcbea"
	read := func() map[string]any {
		code, body := g.do("GET", image, serviceToken, nil)
		if code != http.StatusOK {
			t.Fatalf("read image: %d %s", code, body)
		}
		return decode(t, body)
	}
	withName := func(obj map[string]any, name, rv string) []byte {
		obj["status"].(map[string]any)["name"] = name
		obj["metadata"].(map[string]any)["resourceVersion"] = rv
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	obj := read()
	stale := field(obj, "metadata", "resourceVersion").(string)
	if code, body := g.do("PUT", image+"/status", serviceToken, withName(obj, "photon-current", stale)); code != http.StatusOK {
		t.Fatalf("status write at the current version: %d %s", code, body)
	}
	statusWrites := func() uint64 {
		st, err := js.Stream(t.Context(), events.StreamStatus)
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return info.State.LastSeq
	}
	before := statusWrites()
	code, body := g.do("PUT", image+"/status", serviceToken, withName(read(), "photon-stale", stale))
	if code != http.StatusConflict {
		t.Errorf("status write at a version the object left: %d %s, want 409", code, body)
	}
	if code, body := g.do("PUT", image+"/status", serviceToken, withName(read(), "photon-bad", "not-a-version")); code != http.StatusBadRequest {
		t.Errorf("status write at a malformed version: %d %s, want 400", code, body)
	}
	if got := field(read(), "status", "name"); got != "photon-current" {
		t.Errorf("status.name %v after the refused writes, want photon-current", got)
	}
	if statusWrites() != before {
		t.Error("a refused status write published a slice")
	}
	if code, body := g.do("PUT", image+"/status", serviceToken, withName(read(), "photon-any", "")); code != http.StatusOK {
		t.Errorf("status write without a version: %d %s", code, body)
	}
}
