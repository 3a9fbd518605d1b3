package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// tableCells reads a Table's rows as column name → cell, by object name.
func tableCells(t *testing.T, g *gateway, path string) map[string]map[string]any {
	t.Helper()
	code, body := g.do("GET", path, adminToken, nil, "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	var tbl metav1.Table
	if code != http.StatusOK || json.Unmarshal(body, &tbl) != nil {
		t.Fatalf("table of %s: %d %s", path, code, body)
	}
	rows := map[string]map[string]any{}
	for _, r := range tbl.Rows {
		cells := map[string]any{}
		for i, c := range tbl.ColumnDefinitions {
			cells[c.Name] = r.Cells[i]
		}
		rows[cells["Name"].(string)] = cells
	}
	return rows
}

// TestPrinterColumnsThroughJSONPath: columns are read with client-go's jsonpath, so the
// class instance's Active column (an escaped label key) shows, and a VM's Ready column
// shows its Ready condition, blank without one.
func TestPrinterColumnsThroughJSONPath(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	instance := `{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachineClassInstance",
		"metadata":{"name":"my-vm-class-1","labels":{"vmoperator.vmware.com/active":"true"}},
		"spec":{"hardware":{"cpus":2,"memory":"4Gi"}}}`
	path := "/apis/vmoperator.vmware.com/v1alpha5/namespaces/my-namespace/virtualmachineclassinstances"
	if code, body := g.do("POST", path, adminToken, instance); code != http.StatusCreated {
		t.Fatalf("create class instance: %d %s", code, body)
	}
	if row := tableCells(t, g, path)["my-vm-class-1"]; row["Active"] != "true" || row["CPU"] != float64(2) {
		t.Errorf("class instance row %v, want Active true and CPU 2", row)
	}

	if code, body := g.do("POST", "/apis/storage.k8s.io/v1/storageclasses", adminToken, storageClass, "Content-Type", "application/yaml"); code != http.StatusCreated {
		t.Fatalf("create storage class: %d %s", code, body)
	}
	createNamedVM(t, g, "probed")
	createNamedVM(t, g, "unprobed")
	_, body := g.do("GET", vms+"/probed", adminToken, nil)
	uid := field(decode(t, body), "metadata", "uid").(string)
	st, err := json.Marshal(map[string]any{"conditions": []map[string]any{{
		"type": model.ConditionReady, "status": "False", "reason": "NotReady", "message": "no answer on 22",
		"observedGeneration": 1, "lastTransitionTime": "2025-01-01T00:00:00Z",
	}}})
	if err != nil {
		t.Fatal(err)
	}
	ref := events.Ref{Plural: "virtualmachines", Namespace: "my-namespace", Name: "probed"}
	if _, err := events.PublishStatus(context.Background(), js, ref, events.Slice{Service: model.ServiceNetwork, UID: uid, Generation: 1, Status: st}); err != nil {
		t.Fatal(err)
	}
	g.eventually("the Ready condition folded", func() bool {
		_, body := g.do("GET", vms+"/probed", adminToken, nil)
		return field(decode(t, body), "status", "conditions") != nil
	})
	rows := tableCells(t, g, vms)
	if rows["probed"]["Ready"] != "False" || rows["unprobed"]["Ready"] != nil {
		t.Errorf("Ready cells: probed %v, unprobed %v; want False and blank", rows["probed"]["Ready"], rows["unprobed"]["Ready"])
	}
}
