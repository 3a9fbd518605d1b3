package api

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/util/jsonpath"

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
	paths := make([]*jsonpath.JSONPath, len(k.Columns))
	for i, c := range k.Columns {
		if c.Value != nil {
			continue
		}
		paths[i] = jsonpath.New(c.Name).AllowMissingKeys(true)
		if err := paths[i].Parse("{" + c.JSONPath + "}"); err != nil {
			return nil, fmt.Errorf("printer column %s of %s: %w", c.Name, k.Kind, err)
		}
	}
	for _, raw := range objs {
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, fmt.Errorf("decode stored object: %w", err)
		}
		meta, _ := obj["metadata"].(map[string]any)
		row := metav1.TableRow{Cells: []any{meta["name"]}}
		for i, c := range k.Columns {
			var v any
			if c.Value != nil {
				v = c.Value(raw)
			} else {
				v = columnValue(paths[i], obj)
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

// columnValue is a printer column's value, read with client-go's jsonpath as kube-apiserver
// reads custom resources' columns (filters, escaped keys such as
// .metadata.labels['vmoperator\.vmware\.com/active']): the first result, nil when there is
// none or the object has another shape than the path expects (a blank cell).
func columnValue(path *jsonpath.JSONPath, obj map[string]any) any {
	results, err := path.FindResults(obj)
	if err != nil || len(results) == 0 || len(results[0]) == 0 {
		return nil
	}
	return results[0][0].Interface()
}
