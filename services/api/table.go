package api

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/vmop/vmop/pkg/model"
)

// wantsTable reports whether the client asked for the server-side Table format, as
// kubectl get does (Accept: application/json;as=Table;v=v1;g=meta.k8s.io,...).
func wantsTable(accept string) bool {
	return strings.Contains(accept, "as=Table")
}

// toTable renders objects as a meta.k8s.io/v1 Table with the kind's printer columns,
// each row carrying the object's metadata (PartialObjectMetadata) so kubectl can show
// namespaces and names.
func toTable(k model.Kind, objs [][]byte, listMeta metav1.ListMeta, now time.Time) (*metav1.Table, error) {
	t := &metav1.Table{
		TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "Table"},
		ListMeta: listMeta,
		ColumnDefinitions: []metav1.TableColumnDefinition{{
			Name: "Name", Type: "string", Format: "name", Description: "Name of the object.",
		}},
	}
	for _, c := range k.Columns {
		t.ColumnDefinitions = append(t.ColumnDefinitions, metav1.TableColumnDefinition{
			Name: c.Name, Type: c.Type, Description: c.Description, Priority: c.Priority,
		})
	}
	for _, raw := range objs {
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, fmt.Errorf("decode stored object: %w", err)
		}
		meta, _ := obj["metadata"].(map[string]any)
		row := metav1.TableRow{Cells: []any{meta["name"]}}
		for _, c := range k.Columns {
			v := lookupPath(obj, c.JSONPath)
			if c.Value != nil {
				v = c.Value(raw)
			}
			row.Cells = append(row.Cells, cell(c, v, now))
		}
		partial, err := json.Marshal(map[string]any{
			"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": meta,
		})
		if err != nil {
			return nil, fmt.Errorf("encode row metadata: %w", err)
		}
		row.Object = runtime.RawExtension{Raw: partial}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// cell formats one value the way the apiserver's column printer does: dates as ages,
// absent values as nothing.
func cell(c model.Column, v any, now time.Time) any {
	if v == nil {
		return nil
	}
	if c.Type == "date" {
		s, _ := v.(string)
		ts, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return "<invalid>"
		}
		return duration.HumanDuration(now.Sub(ts))
	}
	switch x := v.(type) {
	case string, bool, float64, int64:
		return x
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// lookupPath follows a simple JSONPath of the printer-column kind (".status.powerState")
// through a decoded object.
func lookupPath(obj map[string]any, path string) any {
	var cur any = obj
	for _, p := range strings.Split(strings.TrimPrefix(path, "."), ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}
