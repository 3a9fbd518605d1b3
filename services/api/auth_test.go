package api_test

import (
	"net/http"
	"testing"
)

func TestAuthentication(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	tests := []struct {
		name, method, path, token string
		want                      int
	}{
		{"no token", "GET", classes, "", http.StatusUnauthorized},
		{"unknown token", "GET", classes, "nope", http.StatusUnauthorized},
		{"user in a granted namespace", "GET", classes, userToken, http.StatusOK},
		{"user in a foreign namespace", "GET", "/apis/vmoperator.vmware.com/v1alpha5/namespaces/kube-system/virtualmachines", userToken, http.StatusForbidden},
		{"user across all namespaces", "GET", "/apis/vmoperator.vmware.com/v1alpha5/virtualmachines", userToken, http.StatusForbidden},
		{"user writes a privileged kind", "POST", classes, userToken, http.StatusForbidden},
		{"user reads a cluster-scoped kind", "GET", "/apis/storage.k8s.io/v1/storageclasses", userToken, http.StatusOK},
		{"admin in any namespace", "GET", "/apis/vmoperator.vmware.com/v1alpha5/namespaces/kube-system/virtualmachines", adminToken, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body any
			if tt.method == "POST" {
				body = seedClass
			}
			code, resp := g.do(tt.method, tt.path, tt.token, body, "Content-Type", "application/yaml")
			if code != tt.want {
				t.Fatalf("%s %s = %d (%s), want %d", tt.method, tt.path, code, resp, tt.want)
			}
			if code >= 400 && decode(t, resp)["kind"] != "Status" {
				t.Errorf("error body is not a Status: %s", resp)
			}
		})
	}
}
