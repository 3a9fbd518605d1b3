package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// Bad input gets a clear error and leaves no trace in the streams.
func TestBadInputIsRejectedAndStoresNothing(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	long := strings.Repeat("a", 254)
	tests := []struct {
		name, body, contentType, query string
		wantCode                       int
		wantInMessage                  string
	}{
		{"malformed JSON", `{"apiVersion": `, "application/json", "", http.StatusBadRequest, "not a valid JSON"},
		{"malformed YAML", "kind: [", "application/yaml", "", http.StatusBadRequest, "not valid YAML"},
		{"unknown field, Strict", strings.Replace(seedClass, "spec:\n", "spec:\n  colour: blue\n", 1),
			"application/yaml", "?fieldValidation=Strict", http.StatusUnprocessableEntity, "spec.colour"},
		{"upper-case name", strings.Replace(seedClass, "my-vm-class", "My-VM-Class", 1),
			"application/yaml", "", http.StatusUnprocessableEntity, "metadata.name: Invalid value"},
		{"too long name", strings.Replace(seedClass, "my-vm-class", long, 1),
			"application/yaml", "", http.StatusUnprocessableEntity, "metadata.name: Invalid value"},
		{"invalid characters", strings.Replace(seedClass, "my-vm-class", "my_vm*class", 1),
			"application/yaml", "", http.StatusUnprocessableEntity, "metadata.name: Invalid value"},
		{"wrong kind for the URL", strings.Replace(seedClass, "kind: VirtualMachineClass", "kind: VirtualMachine", 1),
			"application/yaml", "", http.StatusBadRequest, "does not match"},
		{"oversized body", strings.Replace(seedClass, "spec:\n", "  annotations:\n    big: \""+strings.Repeat("x", 4<<20)+"\"\nspec:\n", 1),
			"application/yaml", "", http.StatusRequestEntityTooLarge, "limit"},
	}
	before := specCount(t, js)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := g.do("POST", classes+tt.query, adminToken, tt.body, "Content-Type", tt.contentType)
			if code != tt.wantCode {
				t.Fatalf("code = %d (%s), want %d", code, body, tt.wantCode)
			}
			st := decode(t, body)
			if st["kind"] != "Status" || !strings.Contains(st["message"].(string), tt.wantInMessage) {
				t.Errorf("status = %s, want a Status whose message contains %q", body, tt.wantInMessage)
			}
		})
	}
	if after := specCount(t, js); after != before {
		t.Errorf("SPECS grew from %d to %d messages: rejected requests must store nothing", before, after)
	}
}

// Without fieldValidation (Warn), unknown fields are dropped and named in a Warning header.
func TestUnknownFieldsWarnByDefault(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	body := strings.Replace(seedClass, "spec:\n", "spec:\n  colour: blue\n", 1)
	code, resp, hdr := g.doHeader("POST", classes, adminToken, body, "Content-Type", "application/yaml")
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, resp)
	}
	if w := hdr.Get("Warning"); !strings.Contains(w, `unknown field \"spec.colour\"`) {
		t.Errorf("Warning header = %q, want it to name spec.colour", w)
	}
	if field(decode(t, resp), "spec", "colour") != nil {
		t.Errorf("unknown field was stored: %s", resp)
	}
}
