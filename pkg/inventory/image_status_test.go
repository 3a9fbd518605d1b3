package inventory

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ImageStatus (TemplateImageStatus for an image of type VM) reads, for an image's
// providerRef, the status Objects gives that image; an item no library has is not found.
func TestImageStatusOfProviderRef(t *testing.T) {
	ctx := testContext(t)
	rc, err := vapiSession(ctx, seeded.client, seeded.sim.URL.User)
	if err != nil {
		t.Fatal(err)
	}
	defer closeVAPISession(rc)
	n := 0
	for _, o := range loadObjects(t) {
		if !strings.HasSuffix(o["kind"].(string), "VirtualMachineImage") {
			continue
		}
		n++
		kind, name := str(o, "spec", "providerRef", "kind"), str(o, "spec", "providerRef", "name")
		status, found, err := ImageStatus(ctx, rc, kind, name)
		if kind == TemplateProviderKind {
			status, found, err = TemplateImageStatus(ctx, seeded.client.Client, name)
		}
		if err != nil || !found {
			t.Errorf("%s %s: found %v, %v", kind, name, found, err)
			continue
		}
		if diff := cmp.Diff(jsonRoundTrip(t, o)["status"], jsonRoundTrip(t, status)); diff != "" {
			t.Errorf("%s %s: status (-Objects +ImageStatus):\n%s", kind, name, diff)
		}
	}
	if n == 0 {
		t.Fatal("no images among the objects")
	}
	for _, kind := range []string{"ContentLibraryItem", "ClusterContentLibraryItem"} {
		if _, found, err := ImageStatus(ctx, rc, kind, "clitem-00000000000000000"); found || err != nil {
			t.Errorf("%s of no item: found %v, %v", kind, found, err)
		}
	}
	if _, found, err := TemplateImageStatus(ctx, seeded.client.Client, "no-such-template"); found || err != nil {
		t.Errorf("template of no VM: found %v, %v", found, err)
	}
	// A cluster item is not found as a namespace library's item.
	for _, o := range loadObjects(t) {
		if o["kind"] == "ClusterVirtualMachineImage" {
			if _, found, _ := ImageStatus(ctx, rc, "ContentLibraryItem", str(o, "spec", "providerRef", "name")); found {
				t.Errorf("cluster item %s found in the namespaces' library", str(o, "spec", "providerRef", "name"))
			}
			break
		}
	}
}
