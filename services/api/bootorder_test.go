package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// An update is admitted against the stored object with the status the services reported:
// BOOT-5 accepts a Disk boot entry naming one of status.volumes and refuses any other.
func TestBootOrderDiskNamesAReportedVolume(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	imageInventory(t, g)
	code, body := g.do("POST", vms, userToken, minimalVM+"  powerState: PoweredOff\n", "Content-Type", "application/yaml")
	if code != http.StatusCreated {
		t.Fatalf("create VM: %d %s", code, body)
	}
	uid := field(decode(t, body), "metadata", "uid").(string)
	status, err := json.Marshal(map[string]any{"volumes": []map[string]string{{"name": "my-vm-boot", "type": "Managed"}}})
	if err != nil {
		t.Fatal(err)
	}
	ref := events.Ref{Plural: "virtualmachines", Namespace: "my-namespace", Name: "my-vm"}
	if _, err := events.PublishStatus(context.Background(), js, ref, events.Slice{
		Service: model.ServiceStorage, UID: uid, Generation: 1, Status: status,
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the volume status folded", func() bool {
		code, body := g.do("GET", vms+"/my-vm", userToken, nil)
		return code == http.StatusOK && strings.Contains(string(body), `"my-vm-boot"`)
	})
	order := func(name string) string {
		return `{"spec":{"bootOptions":{"bootOrder":[{"type":"Disk","name":"` + name + `"}]}}}`
	}
	if code, body := g.do("PATCH", vms+"/my-vm", userToken, order("data"), "Content-Type", "application/merge-patch+json"); code != http.StatusUnprocessableEntity ||
		!strings.Contains(string(body), "spec.bootOptions.bootOrder[0]") {
		t.Errorf("a Disk entry naming no reported volume: %d %.300s, want 422 at spec.bootOptions.bootOrder[0]", code, body)
	}
	if code, body := g.do("PATCH", vms+"/my-vm", userToken, order("my-vm-boot"), "Content-Type", "application/merge-patch+json"); code != http.StatusOK {
		t.Errorf("a Disk entry naming the reported boot volume: %d %.300s, want 200", code, body)
	}
	if code, body := g.do("GET", vms+"/my-vm", userToken, nil); code != http.StatusOK || !strings.Contains(string(body), `"bootOrder"`) {
		t.Errorf("the boot order was not stored: %d %.300s", code, body)
	}
}
