package model

// ApplyDefaults fills the schema defaults of a kind into a decoded object (api-rules D1):
// every absent or null member that has a default gets it, but only inside objects that are
// present, so defaulting never creates a parent (a VM without spec.crypto stays without it).
// Defaults are applied in list items and map values too, and inside a default that was
// just filled in. Numbers are float64, as encoding/json decodes them.
//
// Run it after [CheckSchema]: it assumes the object has the schema's shape and skips
// anything that does not.
func ApplyDefaults(kind string, obj map[string]any) {
	if s, ok := SchemaFor(kind); ok {
		applyDefaults(s, obj)
	}
}

func applyDefaults(s *Schema, v any) {
	switch v := v.(type) {
	case map[string]any:
		for name, ps := range s.Properties {
			child, present := v[name]
			if (!present || child == nil) && ps.defaultValue != nil {
				child = deepCopyJSON(ps.defaultValue)
				v[name] = child
			}
			if child != nil {
				applyDefaults(ps, child)
			}
		}
		if s.AdditionalProperties != nil {
			for _, child := range v {
				applyDefaults(s.AdditionalProperties, child)
			}
		}
	case []any:
		if s.Items != nil {
			for _, item := range v {
				applyDefaults(s.Items, item)
			}
		}
	}
}

// deepCopyJSON copies a decoded JSON value so that filled-in defaults never share maps or
// slices with the schema or with each other.
func deepCopyJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = deepCopyJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = deepCopyJSON(e)
		}
		return out
	}
	return v
}
