package api_test

import (
	"net/http"
	"testing"
)

// A JSON patch applies to the object as the client reads it, as in kube-apiserver: a test
// of its resourceVersion passes while it is current (and fails, 422, once it is not), and an
// operation on its status applies, the status then left as it is by the update.
func TestJSONPatchSeesTheObjectAsRead(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	imageInventory(t, g)
	const image = images + "/vmi-0a0044d7c690bcbea"
	code, body := g.do("GET", image, adminToken, nil)
	if code != http.StatusOK {
		t.Fatalf("get: %d %s", code, body)
	}
	read := decode(t, body)
	rv := field(read, "metadata", "resourceVersion").(string)
	jsonPatch := func(p string) (int, []byte) {
		return g.do("PATCH", image, adminToken, p, "Content-Type", "application/json-patch+json")
	}
	if code, body := jsonPatch(`[{"op":"test","path":"/metadata/resourceVersion","value":"` + rv + `"},{"op":"add","path":"/metadata/labels","value":{"b":"c"}}]`); code != http.StatusOK {
		t.Fatalf("a test of the current resourceVersion: %d %s, want 200", code, body)
	}
	if code, body := jsonPatch(`[{"op":"test","path":"/metadata/resourceVersion","value":"` + rv + `"}]`); code != http.StatusUnprocessableEntity {
		t.Errorf("a test of a resourceVersion no longer current: %d %s, want 422", code, body)
	}
	code, body = jsonPatch(`[{"op":"replace","path":"/status/name","value":"renamed"}]`)
	if code != http.StatusOK {
		t.Fatalf("an operation on the status through the object: %d %s, want 200", code, body)
	}
	if got := field(decode(t, body), "status", "name"); got != field(read, "status", "name") {
		t.Errorf("status.name after a patch of the object = %v, want it left as %v", got, field(read, "status", "name"))
	}
}
