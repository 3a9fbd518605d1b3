package v1alpha4

import (
	"reflect"

	"github.com/vmop/vmop/pkg/model"
)

// restore copies into dst what old holds and view (old as v1alpha4 shows it) lacks,
// walking the three values side by side under the hub schema s.
func restore(s *model.Schema, dst, old, view any) {
	switch o := old.(type) {
	case map[string]any:
		d, _ := dst.(map[string]any)
		v, _ := view.(map[string]any)
		if d == nil {
			return
		}
		for k, ov := range o {
			sub := s.Properties[k]
			if sub == nil {
				sub = s.AdditionalProperties
			}
			vv, seen := v[k]
			dv, has := d[k]
			switch {
			case !seen && !has:
				d[k] = deepCopy(ov) // v1alpha4 cannot express it
			case sub == nil:
			case isMap(ov) && !has:
				// The write dropped the parent; keep only what v1alpha4 never showed.
				child := map[string]any{}
				restore(sub, child, ov, vv)
				if len(child) > 0 {
					d[k] = child
				}
			default:
				restore(sub, dv, ov, vv)
			}
		}
	case []any:
		d, _ := dst.([]any)
		v, _ := view.([]any)
		if s.Items == nil {
			return
		}
		for i, oi := range o {
			di, vi := matchItem(s, d, v, oi, i)
			if di != nil {
				restore(s.Items, di, oi, vi)
			}
		}
	}
}

// matchItem finds the items of dst and view that correspond to old item i: by the list-map
// keys, else by position when the write left the item as v1alpha4 showed it.
func matchItem(s *model.Schema, dst, view []any, oi any, i int) (any, any) {
	if s.ListType == "map" && len(s.ListMapKeys) > 0 {
		return findByKeys(dst, oi, s.ListMapKeys), findByKeys(view, oi, s.ListMapKeys)
	}
	if i >= len(dst) || i >= len(view) || !reflect.DeepEqual(dst[i], view[i]) {
		return nil, nil
	}
	return dst[i], view[i]
}

func findByKeys(items []any, like any, keys []string) any {
	want, _ := like.(map[string]any)
	for _, it := range items {
		m, _ := it.(map[string]any)
		if m == nil {
			continue
		}
		same := true
		for _, k := range keys {
			if !reflect.DeepEqual(m[k], want[k]) {
				same = false
				break
			}
		}
		if same {
			return m
		}
	}
	return nil
}

func isMap(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}
