package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// Issue #4 item 4 at the gateway: any user may put power-on checks on a new VM; adding,
// changing or removing checks afterwards, and delete checks at all, is for privileged
// callers, also while the VM is being deleted (when updates otherwise skip validation).
func TestCheckAnnotationsArePrivileged(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	admissionInventory(t, g)
	const powerOn, del = "poweron.check.vmoperator.vmware.com/ad", "delete.check.vmoperator.vmware.com/backup"
	withAnnotation := func(k, v string) string {
		return strings.Replace(minimalVM, "metadata:\n", "metadata:\n  annotations:\n    "+k+": "+v+"\n", 1)
	}
	annotate := func(token, k string, v any) (int, string) {
		body := map[string]any{"metadata": map[string]any{"annotations": map[string]any{k: v}}}
		code, resp := g.do("PATCH", vms+"/my-vm", token, body, "Content-Type", "application/merge-patch+json")
		return code, string(resp)
	}
	refused := func(what string, code int, body, key string) {
		t.Helper()
		if code != http.StatusUnprocessableEntity || !strings.Contains(body, "metadata.annotations."+key+": Forbidden") {
			t.Errorf("%s: %d %s, want 422 Forbidden at metadata.annotations.%s", what, code, body, key)
		}
	}

	code, body := g.do("POST", vms, userToken, withAnnotation(del, "keep"), "Content-Type", "application/yaml")
	refused("a user creating with a delete check", code, string(body), del)
	if code, body := g.do("POST", vms, userToken, withAnnotation(powerOn, "joining"), "Content-Type", "application/yaml"); code != http.StatusCreated {
		t.Fatalf("a user creating with a power-on check: %d %s", code, body)
	}
	before := specCount(t, js)
	code, resp := annotate(userToken, powerOn, "joined")
	refused("a user changing a power-on check", code, resp, powerOn)
	code, resp = annotate(userToken, powerOn, nil)
	refused("a user removing a power-on check", code, resp, powerOn)
	code, resp = annotate(userToken, "poweron.check.vmoperator.vmware.com/other", "x")
	refused("a user adding a power-on check", code, resp, "poweron.check.vmoperator.vmware.com/other")
	code, resp = annotate(userToken, del, "keep")
	refused("a user adding a delete check", code, resp, del)
	if after := specCount(t, js); after != before {
		t.Errorf("refusals stored: SPECS %d → %d", before, after)
	}
	if code, resp := annotate(adminToken, del, "keep"); code != http.StatusOK {
		t.Fatalf("an admin adding a delete check: %d %s", code, resp)
	}

	if code, body := g.do("DELETE", vms+"/my-vm", userToken, nil); code != http.StatusOK {
		t.Fatalf("delete: %d %s", code, body)
	}
	code, resp = annotate(userToken, del, nil)
	refused("a user removing a delete check while the VM is deleted", code, resp, del)
	code, resp = annotate(userToken, powerOn, nil)
	refused("a user removing a power-on check while the VM is deleted", code, resp, powerOn)
	if code, resp := annotate(userToken, "app", "web"); code != http.StatusOK {
		t.Errorf("a user annotating a VM being deleted: %d %s", code, resp)
	}
	if code, resp := annotate(adminToken, del, nil); code != http.StatusOK {
		t.Errorf("an admin removing the delete check: %d %s", code, resp)
	}
}
