package v1alpha4

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/vmop/vmop/pkg/model"
)

// SchemaFor returns the v1alpha4 schema of kind, derived from its hub schema. The
// schemas are shared: callers must not modify them.
func SchemaFor(kind string) (*model.Schema, bool) {
	all, err := loadSchemas()
	if err != nil {
		return nil, false
	}
	s, ok := all[kind]
	return s, ok
}

var loadSchemas = sync.OnceValues(func() (map[string]*model.Schema, error) {
	out := map[string]*model.Schema{}
	for kind, c := range conversions {
		hub, ok := model.SchemaFor(kind)
		if !ok {
			return nil, fmt.Errorf("no hub schema for %s", kind)
		}
		data, err := json.Marshal(hub)
		if err != nil {
			return nil, fmt.Errorf("encode hub schema of %s: %w", kind, err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("decode hub schema of %s: %w", kind, err)
		}
		c.schema(m)
		if data, err = json.Marshal(m); err != nil {
			return nil, fmt.Errorf("encode v1alpha4 schema of %s: %w", kind, err)
		}
		var s model.Schema
		if err := json.Unmarshal(data, &s); err != nil {
			return nil, fmt.Errorf("decode v1alpha4 schema of %s: %w", kind, err)
		}
		out[kind] = &s
	}
	return out, nil
})

// props returns the properties of the schema reached through the named properties.
func props(s map[string]any, names ...string) map[string]any {
	for _, n := range names {
		s = child(child(s, "properties"), n)
	}
	return child(s, "properties")
}

// itemProps returns the properties of the items of the array schema reached through names.
func itemProps(s map[string]any, names ...string) map[string]any {
	for _, n := range names {
		s = child(child(s, "properties"), n)
	}
	return child(child(s, "items"), "properties")
}

func deleteKeys(m map[string]any, keys ...string) {
	for _, k := range keys {
		delete(m, k)
	}
}
