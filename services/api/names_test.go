package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// A name or namespace in a URL that no object can have (not a DNS name, or not one a
// subject can spell) is a 404 Status, as Kubernetes answers for an object that does not
// exist, or a 400 where Kubernetes refuses the request itself; never a 500.
func TestInvalidNamesInURLsAreNot500(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	const vmBody = `{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachine","metadata":{"name":"NAME"},"spec":{}}`
	badNames := []string{"Bad_NS", "x..y", "a*b", "a>b", "a%20b", "a%09b", "-a", strings.Repeat("a", 300), "%2E%2E", "UPPER"}
	type req struct{ method, path, body, contentType string }
	var reqs []req
	for _, bad := range badNames {
		vm := "/apis/vmoperator.vmware.com/v1alpha5/namespaces/my-namespace/virtualmachines/" + bad
		inBadNS := "/apis/vmoperator.vmware.com/v1alpha5/namespaces/" + bad + "/virtualmachines"
		class := "/apis/vmoperator.vmware.com/v1alpha5/clustervirtualmachineimages/" + bad
		body := strings.ReplaceAll(vmBody, "NAME", bad)
		reqs = append(reqs,
			req{"GET", vm, "", ""},
			req{"GET", vm + "/status", "", ""},
			req{"PUT", vm, body, "application/json"},
			req{"PUT", vm + "/status", body, "application/json"},
			req{"PATCH", vm, `{"metadata":{"labels":{"a":"b"}}}`, "application/merge-patch+json"},
			req{"PATCH", vm, `[{"op":"add","path":"/metadata/labels","value":{}}]`, "application/json-patch+json"},
			req{"DELETE", vm, "", ""},
			req{"PUT", vm + "/start", "", ""},
			req{"POST", vm + "/stop", "", ""},
			req{"GET", inBadNS, "", ""},
			req{"POST", inBadNS, strings.ReplaceAll(vmBody, "NAME", "ok"), "application/json"},
			req{"GET", inBadNS + "/ok", "", ""},
			req{"DELETE", inBadNS + "/ok", "", ""},
			req{"GET", class, "", ""},
			req{"DELETE", class, "", ""},
			req{"GET", "/api/v1/namespaces/" + bad, "", ""},
			req{"DELETE", "/api/v1/namespaces/" + bad, "", ""},
			req{"POST", "/apis/vmoperator.vmware.com/v1alpha5/namespaces/my-namespace/virtualmachines", body, "application/json"},
		)
	}
	reqs = append(reqs, req{"GET", "/apis/vmoperator.vmware.com/v1alpha5/namespaces/Bad_NS/virtualmachines?watch=true&timeoutSeconds=1", "", ""})
	for _, r := range reqs {
		for _, token := range []string{adminToken, userToken} {
			code, body := g.do(r.method, r.path, token, r.body, "Content-Type", r.contentType)
			switch {
			case r.method == "GET" && strings.HasSuffix(strings.Split(r.path, "?")[0], "/virtualmachines"):
				// Kubernetes lists (and watches) a namespace that does not exist as empty.
				if code != http.StatusOK && code != http.StatusForbidden {
					t.Errorf("%s %s as %s: %d %.200s, want 200 or 403", r.method, r.path, token, code, body)
				}
			case code >= 500 || code < 400 || !strings.Contains(string(body), `"kind":"Status"`):
				t.Errorf("%s %s as %s: %d %.200s, want a 4xx Status", r.method, r.path, token, code, body)
			}
		}
	}
}
