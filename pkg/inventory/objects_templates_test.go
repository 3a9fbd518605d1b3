package inventory

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/vim25/mo"
)

// The seeded template is a template VM with a snapshot in TemplateFolder, and every
// namespace has a VM image naming it: type VM, the VM's ID as provider item, its two disks
// with their sizes and places, its hardware version and guest.
func TestTemplateImage(t *testing.T) {
	ctx := testContext(t)
	vm, err := find.NewFinder(seeded.client.Client).VirtualMachine(ctx, "/"+Datacenter+"/vm/"+TemplateFolder+"/"+PhotonTemplate)
	if err != nil {
		t.Fatal(err)
	}
	var m mo.VirtualMachine
	if err := vm.Properties(ctx, vm.Reference(), []string{"config.template", "snapshot"}, &m); err != nil {
		t.Fatal(err)
	}
	if !m.Config.Template || m.Snapshot == nil || m.Snapshot.CurrentSnapshot == nil {
		t.Errorf("template VM: template %v, snapshot %v; want a template with a current snapshot", m.Config.Template, m.Snapshot)
	}
	objs := loadObjects(t)
	for _, ns := range Namespaces {
		img := findImage(objs, ns, PhotonTemplate)
		if img == nil {
			t.Fatalf("no image %s in %s", PhotonTemplate, ns)
		}
		got := jsonRoundTrip(t, img)
		want := map[string]any{
			"type": "VM", "providerItemID": vm.Reference().Value, "hardwareVersion": float64(19), "firmware": "efi",
			"osInfo": map[string]any{"type": "vmwarePhoton64Guest"},
			"disks": []any{
				map[string]any{"name": "disk-0", "limit": "20Gi", "requested": "20Gi", "controllerType": "SCSI", "controllerBusNumber": float64(0), "unitNumber": float64(0)},
				map[string]any{"name": "disk-1", "limit": "10Gi", "requested": "10Gi", "controllerType": "SCSI", "controllerBusNumber": float64(0), "unitNumber": float64(1)},
			},
		}
		status := got["status"].(map[string]any)
		for k, v := range want {
			if d := cmp.Diff(v, status[k]); d != "" {
				t.Errorf("%s: status.%s (-want +got):\n%s", ns, k, d)
			}
		}
		if ref := str(got, "spec", "providerRef", "kind"); ref != TemplateProviderKind || str(got, "spec", "providerRef", "name") != PhotonTemplate {
			t.Errorf("%s: providerRef %v, want the template VM", ns, field(got, "spec", "providerRef"))
		}
		if l := str(got, "metadata", "labels", imageTypeLabel); l != "VM" {
			t.Errorf("%s: label %s = %q, want VM", ns, imageTypeLabel, l)
		}
	}
}
