package v1alpha4

// Helpers over decoded JSON (objects and schemas alike).

// child returns m[key] if it is an object, else nil.
func child(m map[string]any, key string) map[string]any {
	if m == nil {
		return nil
	}
	c, _ := m[key].(map[string]any)
	return c
}

// dig follows keys through nested objects; nil when one is missing.
func dig(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		m = child(m, k)
	}
	return m
}

// ensure returns m[key], creating an empty object there when it is not one.
func ensure(m map[string]any, key string) map[string]any {
	c := child(m, key)
	if c == nil {
		c = map[string]any{}
		m[key] = c
	}
	return c
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}
