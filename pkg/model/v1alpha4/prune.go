package v1alpha4

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vmop/vmop/pkg/model"
)

// prune removes from spec and status every field the v1alpha4 schema of kind does not
// know and returns their paths. Metadata and type mismatches are left to admission's
// schema check, which runs on the converted object.
func prune(kind string, obj map[string]any) []string {
	s, ok := SchemaFor(kind)
	if !ok {
		return nil
	}
	var unknown []string
	for _, key := range []string{"spec", "status"} {
		if sub := s.Properties[key]; sub != nil && obj[key] != nil {
			pruneValue(sub, obj[key], field.NewPath(key), &unknown)
		}
	}
	return unknown
}

func pruneValue(s *model.Schema, v any, p *field.Path, unknown *[]string) {
	switch x := v.(type) {
	case map[string]any:
		if s.Type != "object" || s.IntOrString {
			return
		}
		for k, e := range x {
			switch {
			case s.Properties[k] != nil:
				pruneValue(s.Properties[k], e, p.Child(k), unknown)
			case s.AdditionalProperties != nil:
				pruneValue(s.AdditionalProperties, e, p.Key(k), unknown)
			case s.PreserveUnknownFields:
			default:
				delete(x, k)
				*unknown = append(*unknown, p.Child(k).String())
			}
		}
	case []any:
		if s.Items == nil {
			return
		}
		for i, e := range x {
			pruneValue(s.Items, e, p.Index(i), unknown)
		}
	}
}
