package api_test

import (
	"net/http"
	"testing"

	"github.com/vmop/vmop/pkg/model"
)

const myNamespace = "/api/v1/namespaces/my-namespace"

// Deleting a namespace deletes what it holds, each object as its own deletion allows (a
// Secret at once, a VM once every owning service released it), refuses new content
// meanwhile, and takes the namespace once it is empty. The default namespace stays.
func TestDeletingANamespaceDeletesItsContent(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	uid := createOwnedVM(t, g)
	secret := func(name string) string {
		return `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"` + name + `"},"stringData":{"k":"v"}}`
	}
	if code, body := g.do("POST", secrets, adminToken, secret("kept-until-then")); code != http.StatusCreated {
		t.Fatalf("create secret: %d %s", code, body)
	}

	code, body := g.do("DELETE", myNamespace, adminToken, nil)
	ns := decode(t, body)
	if code != http.StatusOK || field(ns, "metadata", "deletionTimestamp") == nil || field(ns, "status", "phase") != "Terminating" {
		t.Fatalf("delete namespace: %d %s, want it marked and Terminating", code, body)
	}
	g.eventually("the secret gone, the VM being deleted", func() bool {
		code, _ := g.do("GET", secrets+"/kept-until-then", adminToken, nil)
		_, vm := g.do("GET", vms+"/owned-vm", adminToken, nil)
		return code == http.StatusNotFound && field(decode(t, vm), "metadata", "deletionTimestamp") != nil
	})
	code, body = g.do("POST", secrets, adminToken, secret("too-late"))
	if code != http.StatusForbidden {
		t.Fatalf("create in a terminating namespace: %d %s, want 403", code, body)
	}
	if cause := field(decode(t, body), "details", "causes"); cause == nil || cause.([]any)[0].(map[string]any)["reason"] != "NamespaceTerminating" {
		t.Errorf("refusal %s, want the cause NamespaceTerminating", body)
	}
	if code, body := g.do("GET", myNamespace, adminToken, nil); code != http.StatusOK {
		t.Fatalf("namespace while its VM is still held: %d %s, want it still there", code, body)
	}

	for _, svc := range []string{model.ServicePlacement, model.ServicePower, model.ServiceStorage, model.ServiceNetwork, model.ServiceCrypto} {
		release(t, js, svc, uid)
	}
	g.eventually("namespace gone after its last object", func() bool {
		code, _ := g.do("GET", myNamespace, adminToken, nil)
		return code == http.StatusNotFound
	})
	if code, body := g.do("GET", vms+"/owned-vm", adminToken, nil); code != http.StatusNotFound {
		t.Errorf("VM after its namespace went: %d %s", code, body)
	}

	if code, body := g.do("DELETE", "/api/v1/namespaces/default", adminToken, nil); code != http.StatusForbidden {
		t.Errorf("delete namespace default: %d %s, want 403", code, body)
	}
}
