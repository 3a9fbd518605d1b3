package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

// Thousands of unknown fields make thousands of warnings; the Warning headers stay
// within kube-apiserver's bounds: 4096 runes of text in all, each cut to 256.
func TestWarningHeadersAreCapped(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	var unknown []string
	for i := range 3000 {
		unknown = append(unknown, fmt.Sprintf("%q: 1", fmt.Sprintf("f%04d%s", i, strings.Repeat("x", 300))))
	}
	body := fmt.Sprintf(`{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachineClass",
		"metadata":{"name":"noisy"},"spec":{"hardware":{"cpus":1},%s}}`, strings.Join(unknown, ","))
	code, resp, hdr := g.doHeader("POST", classes, adminToken, body)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %.300s", code, resp)
	}
	warnings := hdr.Values("Warning")
	total := 0
	for _, w := range warnings {
		text := strings.TrimSuffix(strings.TrimPrefix(w, `299 - "`), `"`)
		n := utf8.RuneCountInString(text)
		if n > 256+10 { // quoting escapes the field's quotes
			t.Errorf("a warning of %d runes, want at most 256: %.80s…", n, text)
		}
		total += n
	}
	if len(warnings) == 0 || total > 4096+20*len(warnings) {
		t.Errorf("%d warnings of %d runes in all, want some and at most 4096", len(warnings), total)
	}
}
