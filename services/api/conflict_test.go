package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// A PUT naming a resourceVersion that is not the object's current one is 409 Conflict:
// an older one (someone wrote in between) and one the object never had alike; the
// current one, or none, is accepted.
func TestUpdateWithAnotherResourceVersionIsAConflict(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	created := createClass(t, g)
	stale := field(created, "metadata", "resourceVersion").(string)
	code, body := g.do("PATCH", classes+"/my-vm-class", adminToken, `{"spec":{"description":"changed"}}`,
		"Content-Type", "application/merge-patch+json")
	if code != http.StatusOK {
		t.Fatalf("patch: %d %s", code, body)
	}
	current := field(decode(t, body), "metadata", "resourceVersion").(string)
	put := func(rv string) (int, []byte) {
		obj := decode(t, body)
		obj["spec"].(map[string]any)["description"] = "put with " + rv
		metadata := obj["metadata"].(map[string]any)
		if rv == "" {
			delete(metadata, "resourceVersion")
		} else {
			metadata["resourceVersion"] = rv
		}
		return g.do("PUT", classes+"/my-vm-class", adminToken, obj)
	}
	before := specCount(t, js)
	for _, rv := range []string{stale, "999999.0", "999999"} {
		if code, resp := put(rv); code != http.StatusConflict || !strings.Contains(string(resp), `"reason":"Conflict"`) {
			t.Errorf("PUT with resourceVersion %q (current %q): %d %s, want 409", rv, current, code, resp)
		}
	}
	if after := specCount(t, js); after != before {
		t.Errorf("SPECS holds %d messages, want %d: a conflict stores nothing", after, before)
	}
	if code, resp := put(current); code != http.StatusOK {
		t.Errorf("PUT with the current resourceVersion %q: %d %s, want 200", current, code, resp)
	}
	if code, resp := put(""); code != http.StatusOK {
		t.Errorf("PUT without resourceVersion: %d %s, want 200", code, resp)
	}
}
