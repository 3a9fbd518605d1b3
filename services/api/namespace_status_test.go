package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// A Namespace's status subresource, which discovery lists, is served: kubectl get ns
// --subresource=status reads the Namespace.
func TestNamespaceStatusSubresource(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	code, body := g.do("GET", myNamespace+"/status", adminToken, nil)
	if code != http.StatusOK || field(decode(t, body), "metadata", "name") != "my-namespace" || field(decode(t, body), "kind") != "Namespace" {
		t.Errorf("GET %s/status: %d %s, want 200 and the Namespace", myNamespace, code, body)
	}
	if out := g.kubectl(t, "get", "ns", "my-namespace", "--subresource=status"); !strings.Contains(out, "my-namespace") {
		t.Errorf("kubectl get ns --subresource=status:\n%s", out)
	}
}
