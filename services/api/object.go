package api

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// Helpers over decoded objects (map[string]any), the gateway's generic representation.

func metadata(obj map[string]any) map[string]any {
	m, ok := obj["metadata"].(map[string]any)
	if !ok {
		m = map[string]any{}
		obj["metadata"] = m
	}
	return m
}

func metaString(obj map[string]any, key string) string {
	s, _ := metadata(obj)[key].(string)
	return s
}

func generation(obj map[string]any) int64 {
	switch g := metadata(obj)["generation"].(type) {
	case float64:
		return int64(g)
	case int64:
		return g
	case json.Number:
		n, _ := g.Int64()
		return n
	}
	return 0
}

func finalizers(obj map[string]any) []any {
	f, _ := metadata(obj)["finalizers"].([]any)
	return f
}

// content is everything but metadata and status: what "generation" counts changes of.
func content(obj map[string]any) map[string]any {
	c := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "metadata" && k != "status" && k != "apiVersion" && k != "kind" {
			c[k] = v
		}
	}
	return c
}

func sameContent(a, b map[string]any) bool { return reflect.DeepEqual(content(a), content(b)) }

// specSeqOf reads the spec part of a resourceVersion "<spec>.<status>".
func specSeqOf(rv string) (uint64, bool) {
	spec, _, _ := strings.Cut(rv, ".")
	n, err := strconv.ParseUint(spec, 10, 64)
	return n, err == nil
}

// normalize round-trips through JSON so values compare as they will be stored.
func normalize(obj map[string]any) (map[string]any, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(b, &out)
}

func equalObjects(a, b map[string]any) bool { return reflect.DeepEqual(a, b) }
