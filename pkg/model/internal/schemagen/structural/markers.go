package structural

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// markerLines returns the markers among comment lines, without their leading "+".
func markerLines(lines []string) []string {
	var out []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "+") && len(l) > 1 {
			out = append(out, l[1:])
		}
	}
	return out
}

// description is the first paragraph of a doc comment, markers dropped and lines joined
// with single spaces.
func description(lines []string) string {
	var words []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "+") {
			continue
		}
		if l == "" {
			if len(words) > 0 {
				break
			}
			continue
		}
		words = append(words, l)
	}
	return strings.Join(words, " ")
}

// isRequired reports whether markers make a field required; only markers decide.
func isRequired(ms []string) bool {
	req := false
	for _, m := range ms {
		switch m {
		case "kubebuilder:validation:Required", "required":
			req = true
		case "kubebuilder:validation:Optional", "optional":
			req = false
		}
	}
	return req
}

// ignoredMarkers are markers that do not shape the schema.
var ignoredMarkers = []string{
	"kubebuilder:object:", "kubebuilder:subresource:", "kubebuilder:resource:", "kubebuilder:printcolumn:",
	"kubebuilder:storageversion", "kubebuilder:skipversion", "kubebuilder:validation:XValidation",
	"kubebuilder:validation:Required", "kubebuilder:validation:Optional", "kubebuilder:validation:UniqueItems",
	"kubebuilder:validation:EmbeddedResource", "kubebuilder:skip", "kubebuilder:deprecatedversion",
	"kubebuilder:unservedversion", "kubebuilder:metadata", "kubebuilder:ac:", "kubebuilder:rbac:",
	"required", "optional", "genclient", "k8s:", "groupName", "versionName", "mapType", "structType",
	"nullable",
}

// applyMarkers shapes s by the markers that concern it. Markers prefixed with
// "kubebuilder:validation:items:" apply to the items of an array.
func applyMarkers(s map[string]any, ms []string) error {
	for _, m := range ms {
		target := s
		if rest, ok := strings.CutPrefix(m, "kubebuilder:validation:items:"); ok {
			items, isMap := s["items"].(map[string]any)
			if !isMap {
				return fmt.Errorf("marker +%s on a non-array", m)
			}
			target, m = items, "kubebuilder:validation:"+rest
		}
		if err := applyMarker(target, m); err != nil {
			return fmt.Errorf("marker +%s: %w", m, err)
		}
	}
	return nil
}

func applyMarker(s map[string]any, m string) error {
	name, value, _ := strings.Cut(m, "=")
	switch name {
	case "kubebuilder:validation:Enum":
		return setEnum(s, value)
	case "kubebuilder:validation:Pattern":
		if _, err := regexp.Compile(unquote(value)); err != nil {
			return fmt.Errorf("pattern does not compile: %w", err)
		}
		return scalarOnly(s, "pattern", unquote(value))
	case "kubebuilder:validation:Format":
		return scalarOnly(s, "format", unquote(value))
	case "kubebuilder:validation:Minimum":
		return setNumber(s, "minimum", value)
	case "kubebuilder:validation:Maximum":
		return setNumber(s, "maximum", value)
	case "kubebuilder:validation:MinLength":
		return setCount(s, "minLength", value, "string")
	case "kubebuilder:validation:MaxLength":
		return setCount(s, "maxLength", value, "string")
	case "kubebuilder:validation:MinItems":
		return setCount(s, "minItems", value, "array")
	case "kubebuilder:validation:MaxItems":
		return setCount(s, "maxItems", value, "array")
	case "kubebuilder:validation:Type":
		s["type"] = unquote(value)
	case "kubebuilder:validation:XIntOrString":
		delete(s, "type")
		s["x-kubernetes-int-or-string"] = true
	case "kubebuilder:validation:Schemaless":
		for k := range s {
			if k != "description" {
				delete(s, k)
			}
		}
		s["x-kubernetes-preserve-unknown-fields"] = true
	case "kubebuilder:pruning:PreserveUnknownFields":
		s["x-kubernetes-preserve-unknown-fields"] = true
	case "kubebuilder:default", "default":
		return setDefault(s, value)
	case "listType":
		if s["type"] != "array" {
			return fmt.Errorf("not an array")
		}
		if value != "map" && value != "set" && value != "atomic" {
			return fmt.Errorf("unknown list type %q", value)
		}
		s["x-kubernetes-list-type"] = value
	case "listMapKey":
		keys, _ := s["x-kubernetes-list-map-keys"].([]any)
		s["x-kubernetes-list-map-keys"] = append(keys, value)
	default:
		for _, p := range ignoredMarkers {
			if strings.HasPrefix(m, p) {
				return nil
			}
		}
		if strings.HasPrefix(m, "kubebuilder:validation:") {
			return fmt.Errorf("unsupported validation marker")
		}
	}
	return nil
}

func scalarOnly(s map[string]any, key, value string) error {
	if s["type"] == "array" || s["type"] == "object" {
		return fmt.Errorf("%s on %v (use kubebuilder:validation:items: for list items)", key, s["type"])
	}
	s[key] = value
	return nil
}

func setEnum(s map[string]any, value string) error {
	if s["type"] == "array" || s["type"] == "object" {
		return fmt.Errorf("enum on %v", s["type"])
	}
	var enum []any
	for _, v := range strings.Split(value, ";") {
		lit, err := literal(s, unquote(strings.TrimSpace(v)))
		if err != nil {
			return err
		}
		enum = append(enum, lit)
	}
	s["enum"] = enum
	return nil
}

func setNumber(s map[string]any, key, value string) error {
	if s["type"] != "integer" && s["type"] != "number" {
		return fmt.Errorf("%s on non-numeric type %v", key, s["type"])
	}
	n, err := literal(s, value)
	if err != nil {
		return err
	}
	s[key] = n
	return nil
}

func setCount(s map[string]any, key, value, typ string) error {
	if s["type"] != typ {
		return fmt.Errorf("%s on %v, want %s", key, s["type"], typ)
	}
	n, err := strconv.ParseInt(value, 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("%s must be a non-negative integer, got %q", key, value)
	}
	s[key] = n
	return nil
}

// setDefault parses a default the way controller-gen accepts it: JSON, or for string
// schemas also a bare word.
func setDefault(s map[string]any, value string) error {
	var v any
	switch {
	case s["type"] == "string":
		v = unquote(value)
	default:
		if err := json.Unmarshal([]byte(value), &v); err != nil {
			return fmt.Errorf("default %q is not JSON: %w", value, err)
		}
		if s["type"] == "integer" {
			f, ok := v.(float64)
			if !ok || f != float64(int64(f)) {
				return fmt.Errorf("default %q is not an integer", value)
			}
			v = int64(f)
		}
	}
	if enum, ok := s["enum"].([]any); ok && !containsValue(enum, v) {
		return fmt.Errorf("default %v is not in enum %v", v, enum)
	}
	s["default"] = v
	return nil
}

func containsValue(list []any, v any) bool {
	for _, e := range list {
		if fmt.Sprint(e) == fmt.Sprint(v) {
			return true
		}
	}
	return false
}

// literal converts a marker value to the JSON type of s.
func literal(s map[string]any, v string) (any, error) {
	switch s["type"] {
	case "integer":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", v)
		}
		return n, nil
	case "number":
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", v)
		}
		return n, nil
	case "boolean":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("%q is not a boolean", v)
		}
		return b, nil
	}
	return v, nil
}

// unquote removes one level of `...` or "..." quoting.
func unquote(v string) string {
	v = strings.TrimSpace(v)
	if len(v) >= 2 && v[0] == '`' && v[len(v)-1] == '`' {
		return v[1 : len(v)-1]
	}
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		if u, err := strconv.Unquote(v); err == nil {
			return u
		}
	}
	return v
}
