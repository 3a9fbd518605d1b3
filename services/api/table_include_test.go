package api_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
)

// includeObject chooses what a Table row carries, as in Kubernetes: the metadata by
// default, the whole object (the console reads fields no column shows), or nothing.
func TestTableIncludeObject(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	admissionInventory(t, g)
	createMinimalVM(t, g)
	type table struct {
		ColumnDefinitions []struct{ Name string }
		Rows              []struct {
			Cells  []any
			Object map[string]any
		}
	}
	const accept = "application/json;as=Table;v=v1;g=meta.k8s.io"
	list := func(query string) table {
		t.Helper()
		code, body := g.do("GET", vms+query, userToken, nil, "Accept", accept)
		var tbl table
		if err := json.Unmarshal(body, &tbl); code != http.StatusOK || err != nil || len(tbl.Rows) != 1 {
			t.Fatalf("GET %s: %d %s (%v)", query, code, body, err)
		}
		return tbl
	}
	for query, want := range map[string]string{"": "PartialObjectMetadata", "?includeObject=Metadata": "PartialObjectMetadata", "?includeObject=Object": "VirtualMachine"} {
		obj := list(query).Rows[0].Object
		if obj["kind"] != want || field(obj, "metadata", "name") != "my-vm" {
			t.Errorf("%s: row object %v, want a %s of my-vm", query, obj, want)
		}
		if _, hasSpec := obj["spec"]; hasSpec != (want == "VirtualMachine") {
			t.Errorf("%s: row object has spec: %v", query, hasSpec)
		}
	}
	if obj := list("?includeObject=None").Rows[0].Object; obj != nil {
		t.Errorf("includeObject=None: row object %v", obj)
	}
	if obj := list("?includeObject=Object").Rows[0].Object; field(obj, "spec", "className") != "my-vm-class" {
		t.Errorf("includeObject=Object: spec.className %v", field(obj, "spec", "className"))
	}

	// A watch's one-row Tables carry it too.
	code, body := g.do("GET", vms+"?watch=1&timeoutSeconds=1&includeObject=Object", userToken, nil, "Accept", accept)
	lines := bufio.NewScanner(bytes.NewReader(body))
	if code != http.StatusOK || !lines.Scan() {
		t.Fatalf("watch: %d %s", code, body)
	}
	var ev struct {
		Type   string
		Object table
	}
	if err := json.Unmarshal(lines.Bytes(), &ev); err != nil || ev.Type != "ADDED" || len(ev.Object.Rows) != 1 ||
		field(ev.Object.Rows[0].Object, "spec", "className") != "my-vm-class" {
		t.Errorf("watch event %s (%v)", lines.Bytes(), err)
	}

	for _, path := range []string{vms + "?includeObject=Everything", vms + "?watch=1&includeObject=Everything"} {
		if code, body := g.do("GET", path, userToken, nil, "Accept", accept); code != http.StatusBadRequest || !bytes.Contains(body, []byte("includeObject")) {
			t.Errorf("GET %s: %d %s, want 400 naming includeObject", path, code, body)
		}
	}
}
