package api_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/services/api"
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

// A namespace's own finalizers hold the namespace alone: what it holds goes at once, and
// the namespace once they are removed.
func TestNamespaceFinalizersHoldOnlyTheNamespace(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	const held = "/api/v1/namespaces/held-ns"
	if code, body := g.do("POST", "/api/v1/namespaces", adminToken,
		`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"held-ns","finalizers":["example.com/hold"]}}`); code != http.StatusCreated {
		t.Fatalf("create namespace: %d %s", code, body)
	}
	if code, body := g.do("POST", held+"/secrets", adminToken, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}`); code != http.StatusCreated {
		t.Fatalf("create secret: %d %s", code, body)
	}
	if code, body := g.do("DELETE", held, adminToken, nil); code != http.StatusOK {
		t.Fatalf("delete namespace: %d %s", code, body)
	}
	g.eventually("the secret gone", func() bool {
		code, _ := g.do("GET", held+"/secrets/s", adminToken, nil)
		return code == http.StatusNotFound
	})
	if code, body := g.do("GET", held, adminToken, nil); code != http.StatusOK || field(decode(t, body), "status", "phase") != "Terminating" {
		t.Fatalf("namespace held by its finalizer: %d %s, want it Terminating", code, body)
	}
	if code, body := g.do("PATCH", held, adminToken, `{"metadata":{"finalizers":null}}`, "Content-Type", "application/merge-patch+json"); code != http.StatusOK {
		t.Fatalf("remove the finalizer: %d %s", code, body)
	}
	g.eventually("namespace gone once its finalizer went", func() bool {
		code, _ := g.do("GET", held, adminToken, nil)
		return code == http.StatusNotFound
	})
}

// A gateway started while a seeded namespace is being deleted starts, and seeds nothing
// into the namespace; an object stored in it past the namespace check (a create that read
// the namespace before its deletion was folded) goes too.
func TestTerminatingNamespaceAcrossRestart(t *testing.T) {
	js := newStreams(t)
	dir := t.TempDir()
	seed := append(slices.Clone(seedNamespaces), map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "seeded", "namespace": "my-namespace"}})
	withSeed := func(c *api.Config) { c.Seed = seed }
	g := startGatewayWith(t, js, dir, withSeed)
	uid := createOwnedVM(t, g)
	if code, body := g.do("DELETE", myNamespace, adminToken, nil); code != http.StatusOK {
		t.Fatalf("delete namespace: %d %s", code, body)
	}
	g.eventually("the seeded secret gone", func() bool {
		code, _ := g.do("GET", secrets+"/seeded", adminToken, nil)
		return code == http.StatusNotFound
	})

	g.stop()
	g.stop = nil
	g = startGatewayWith(t, js, dir, withSeed)
	if code, body := g.do("GET", secrets+"/seeded", adminToken, nil); code != http.StatusNotFound {
		t.Errorf("seeded secret after a restart while its namespace is deleted: %d %s, want 404", code, body)
	}

	late := events.Ref{Plural: "secrets", Namespace: "my-namespace", Name: "late"}
	body := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"late","namespace":"my-namespace","uid":"late-uid","generation":1}}`
	if _, err := events.AppendSpec(t.Context(), js, late, events.OpPut, []byte(body), 0, nil); err != nil {
		t.Fatal(err)
	}
	g.eventually("the late secret deleted", func() bool {
		code, _ := g.do("GET", secrets+"/late", adminToken, nil)
		return code == http.StatusNotFound
	})

	for _, svc := range []string{model.ServicePlacement, model.ServicePower, model.ServiceStorage, model.ServiceNetwork, model.ServiceCrypto} {
		release(t, js, svc, uid)
	}
	g.eventually("namespace gone after its last object", func() bool {
		code, _ := g.do("GET", myNamespace, adminToken, nil)
		return code == http.StatusNotFound
	})
}
