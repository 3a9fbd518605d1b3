package api_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// The console's assets are served at / and /console/ without a token, with a policy that
// keeps the page to its own origin; the API behind it still asks for one.
func TestConsoleServedWithoutToken(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	for _, path := range []string{"/", "/console/", "/console"} {
		code, body, header := g.doHeader("GET", path, "", nil)
		if code != http.StatusOK || !strings.HasPrefix(header.Get("Content-Type"), "text/html") ||
			!bytes.Contains(body, []byte(`<script type="module" src="/console/js/main.js">`)) {
			t.Errorf("GET %s: %d %s %.200s", path, code, header.Get("Content-Type"), body)
		}
		if csp := header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("GET %s: Content-Security-Policy %q", path, csp)
		}
	}
	for path, kind := range map[string]string{"/console/js/main.js": "text/javascript", "/console/js/views/vm.js": "text/javascript", "/console/console.css": "text/css"} {
		code, _, header := g.doHeader("GET", path, "", nil)
		if code != http.StatusOK || !strings.HasPrefix(header.Get("Content-Type"), kind) || header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: %d %s", path, code, header.Get("Content-Type"))
		}
	}
	for _, path := range []string{"/console/nope.js", "/console/js/"} {
		if code, body := g.do("GET", path, "", nil); code != http.StatusNotFound {
			t.Errorf("GET %s: %d %.200s, want 404", path, code, body)
		}
	}
	if code, body := g.do("GET", "/apis", "", nil); code != http.StatusUnauthorized {
		t.Errorf("GET /apis without a token: %d %s", code, body)
	}
}
