package model

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// CheckSchema is stage 1 of admission (api-rules §5.1): it checks a decoded object of kind
// against the kind's schema, the way the Kubernetes API server checks a custom resource.
//
// Fields the schema does not know are removed from obj (pruned) and their paths returned in
// Kubernetes' rendering, e.g. "spec.foo" as in `unknown field "spec.foo"`; the caller decides
// by the request's fieldValidation whether they are errors, warnings or nothing. Null
// members are removed too, without being reported, as the API server drops nulls of
// non-nullable fields; a removed required member is then reported as missing.
//
// Checked: JSON types, required members, enums, patterns, formats (uuid, int32, int64,
// date-time, byte, quantity; the empty string counts as unset and passes), minimum/maximum,
// string lengths, item counts, and uniqueness of list-map keys and list-set members.
// Errors come in a fixed order: members by name, depth first. Numbers may be float64 (as
// encoding/json decodes them), json.Number, or Go integers.
//
// An unknown kind yields a single internal error.
func CheckSchema(kind string, obj map[string]any) (unknown []string, errs field.ErrorList) {
	s, ok := SchemaFor(kind)
	if !ok {
		return nil, field.ErrorList{field.InternalError(nil, fmt.Errorf("no schema for kind %q", kind))}
	}
	c := &checker{}
	c.object(s, obj, nil)
	return c.unknown, c.errs
}

// checker collects what one CheckSchema walk finds.
type checker struct {
	unknown []string
	errs    field.ErrorList
}

func (c *checker) value(s *Schema, v any, p *field.Path) {
	if s.IntOrString {
		c.intOrString(s, v, p)
		return
	}
	switch s.Type {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			c.typeError(v, "object", p)
			return
		}
		c.object(s, m, p)
	case "array":
		a, ok := v.([]any)
		if !ok {
			c.typeError(v, "array", p)
			return
		}
		c.array(s, a, p)
	case "string":
		str, ok := v.(string)
		if !ok {
			c.typeError(v, "string", p)
			return
		}
		c.str(s, str, p)
	case "integer":
		n, ok := integer(v)
		if !ok {
			c.typeError(v, "integer", p)
			return
		}
		c.number(s, n, p)
	case "number":
		n, ok := number(v)
		if !ok {
			c.typeError(v, "number", p)
			return
		}
		c.number(s, n, p)
	case "boolean":
		if _, ok := v.(bool); !ok {
			c.typeError(v, "boolean", p)
			return
		}
	}
	// Untyped schemas (x-kubernetes-preserve-unknown-fields) accept any value.
}

func (c *checker) object(s *Schema, m map[string]any, p *field.Path) {
	names := make([]string, 0, len(m)+len(s.Required))
	for k := range m {
		names = append(names, k)
	}
	for _, r := range s.Required {
		if _, ok := m[r]; !ok {
			names = append(names, r)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		v, present := m[k]
		if present && v == nil {
			delete(m, k)
			present = false
		}
		if !present {
			if slices.Contains(s.Required, k) {
				c.errs = append(c.errs, field.Required(p.Child(k), ""))
			}
			continue
		}
		switch {
		case s.Properties[k] != nil:
			c.value(s.Properties[k], v, p.Child(k))
		case s.AdditionalProperties != nil:
			c.value(s.AdditionalProperties, v, p.Key(k))
		case s.PreserveUnknownFields:
		default:
			delete(m, k)
			c.unknown = append(c.unknown, p.Child(k).String())
		}
	}
}

func (c *checker) array(s *Schema, a []any, p *field.Path) {
	if s.MaxItems != nil && int64(len(a)) > *s.MaxItems {
		c.errs = append(c.errs, field.TooMany(p, len(a), int(*s.MaxItems)))
	}
	if s.MinItems != nil && int64(len(a)) < *s.MinItems {
		c.errs = append(c.errs, field.TooFew(p, len(a), int(*s.MinItems)))
	}
	if s.Items != nil {
		for i, item := range a {
			c.value(s.Items, item, p.Index(i))
		}
	}
	switch s.ListType {
	case "map":
		c.listMapDuplicates(s.ListMapKeys, s.Items, a, p)
	case "set":
		c.listSetDuplicates(a, p)
	}
}

// listMapDuplicates reports every item whose key repeats an earlier item's: at
// `<list>[i].<key>` with the key value, or for several keys at `<list>[i]` with the values
// joined by "/". An absent key counts with its default, as it will be after defaulting;
// items lacking a key without default are left to the required check.
func (c *checker) listMapDuplicates(keys []string, items *Schema, a []any, p *field.Path) {
	if len(keys) == 0 {
		return
	}
	seen := map[string]bool{}
	for i, item := range a {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		values := make([]any, 0, len(keys))
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			v := m[k]
			if v == nil && items != nil && items.Properties[k] != nil {
				v = items.Properties[k].defaultValue
			}
			if v == nil {
				break
			}
			values = append(values, scalar(v))
			parts = append(parts, fmt.Sprint(scalar(v)))
		}
		if len(parts) < len(keys) {
			continue
		}
		id := strings.Join(parts, "/")
		if !seen[id] {
			seen[id] = true
			continue
		}
		if len(keys) == 1 {
			c.errs = append(c.errs, field.Duplicate(p.Index(i).Child(keys[0]), values[0]))
		} else {
			c.errs = append(c.errs, field.Duplicate(p.Index(i), id))
		}
	}
}

func (c *checker) listSetDuplicates(a []any, p *field.Path) {
	seen := map[string]bool{}
	for i, item := range a {
		b, err := json.Marshal(item)
		if err != nil {
			continue
		}
		if seen[string(b)] {
			c.errs = append(c.errs, field.Duplicate(p.Index(i), scalar(item)))
			continue
		}
		seen[string(b)] = true
	}
}

func (c *checker) str(s *Schema, v string, p *field.Path) {
	if !c.enum(s, v, p) {
		return
	}
	n := int64(utf8.RuneCountInString(v))
	if s.MaxLength != nil && n > *s.MaxLength {
		c.errs = append(c.errs, field.Invalid(p, v, fmt.Sprintf("must be no more than %d characters", *s.MaxLength)))
	}
	if s.MinLength != nil && n < *s.MinLength {
		c.errs = append(c.errs, field.Invalid(p, v, fmt.Sprintf("must be at least %d characters", *s.MinLength)))
	}
	if s.pattern != nil && !s.pattern.MatchString(v) {
		c.errs = append(c.errs, field.Invalid(p, v, fmt.Sprintf("must match '%s'", s.Pattern)))
	}
	if v != "" {
		if detail := formatError(s.Format, v); detail != "" {
			c.errs = append(c.errs, field.Invalid(p, v, detail))
		}
	}
}

func (c *checker) number(s *Schema, n float64, p *field.Path) {
	if !c.enum(s, n, p) {
		return
	}
	v := scalar(n)
	if s.Minimum != nil && n < *s.Minimum {
		c.errs = append(c.errs, field.Invalid(p, v, fmt.Sprintf("must be greater than or equal to %v", *s.Minimum)))
	}
	if s.Maximum != nil && n > *s.Maximum {
		c.errs = append(c.errs, field.Invalid(p, v, fmt.Sprintf("must be less than or equal to %v", *s.Maximum)))
	}
	switch s.Format {
	case "int32":
		if n < math.MinInt32 || n > math.MaxInt32 {
			c.errs = append(c.errs, field.Invalid(p, v, "must fit in a 32-bit signed integer"))
		}
	case "int64":
		if n < math.MinInt64 || n >= math.MaxInt64 {
			c.errs = append(c.errs, field.Invalid(p, v, "must fit in a 64-bit signed integer"))
		}
	}
}

// enum reports whether v is allowed by s.Enum, recording an error if not.
func (c *checker) enum(s *Schema, v any, p *field.Path) bool {
	if len(s.enumStrings) == 0 || slices.Contains(s.enumStrings, fmt.Sprint(scalar(v))) {
		return true
	}
	c.errs = append(c.errs, field.NotSupported(p, scalar(v), s.enumStrings))
	return false
}

// intOrString accepts an integer or a string; a quantity must parse as resource.Quantity
// (numbers, which the Quantity JSON form also accepts, may have a fraction).
func (c *checker) intOrString(s *Schema, v any, p *field.Path) {
	if str, ok := v.(string); ok {
		if s.Format == "quantity" {
			if _, err := resource.ParseQuantity(str); err != nil {
				c.errs = append(c.errs, field.Invalid(p, str, "must be a quantity, e.g. 10Gi or 500m"))
			}
		}
		return
	}
	if _, ok := integer(v); ok {
		return
	}
	if _, ok := number(v); ok && s.Format == "quantity" {
		return
	}
	c.typeError(v, "integer or string", p)
}

func (c *checker) typeError(v any, want string, p *field.Path) {
	c.errs = append(c.errs, field.Invalid(p, jsonType(v), "must be of type "+want))
}

var uuidRE = regexp.MustCompile(`(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$`)

// formatError names what a non-empty string fails to be, or is "" when it is fine.
func formatError(format, v string) string {
	switch format {
	case "uuid":
		if !uuidRE.MatchString(v) {
			return "must be a UUID"
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339Nano, v); err != nil {
			return "must be an RFC 3339 date-time"
		}
	case "byte":
		if _, err := base64.StdEncoding.DecodeString(v); err != nil {
			return "must be base64-encoded"
		}
	}
	return ""
}

// number converts the numeric forms a decoder produces to float64.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// integer is number restricted to whole values.
func integer(v any) (float64, bool) {
	n, ok := number(v)
	return n, ok && n == math.Trunc(n) && !math.IsInf(n, 0)
}

// scalar prepares a value for an error message: whole numbers print without a fraction.
func scalar(v any) any {
	if n, ok := integer(v); ok && math.Abs(n) < 1<<53 {
		return int64(n)
	}
	if n, ok := number(v); ok {
		return n
	}
	return v
}

// jsonType names the JSON type of a decoded value, as type errors report it.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	if _, ok := integer(v); ok {
		return "integer"
	}
	if _, ok := number(v); ok {
		return "number"
	}
	return fmt.Sprintf("%T", v)
}
