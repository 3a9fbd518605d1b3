package model

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// testSchema exercises every check independently of the API types.
const testSchema = `{"Thing": {"type": "object", "properties": {
  "name":   {"type": "string", "pattern": "^[a-z0-9]{2,}$", "maxLength": 5, "minLength": 3},
  "mode":   {"type": "string", "enum": ["Hard", "Soft"]},
  "count":  {"type": "integer", "format": "int32", "minimum": 1, "maximum": 10},
  "big":    {"type": "integer", "format": "int32"},
  "ratio":  {"type": "number"},
  "on":     {"type": "boolean"},
  "id":     {"type": "string", "format": "uuid"},
  "at":     {"type": "string", "format": "date-time"},
  "data":   {"type": "string", "format": "byte"},
  "size":   {"x-kubernetes-int-or-string": true, "format": "quantity"},
  "port":   {"x-kubernetes-int-or-string": true},
  "labels": {"type": "object", "additionalProperties": {"type": "string"}},
  "raw":    {"x-kubernetes-preserve-unknown-fields": true},
  "open":   {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"n": {"type": "integer"}}},
  "tags":   {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set", "maxItems": 3},
  "parts":  {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
             "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "n": {"type": "integer"}}}},
  "refs":   {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["kind", "name"],
             "items": {"type": "object", "properties": {"kind": {"type": "string"}, "name": {"type": "string"}}}},
  "buses":  {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["bus"],
             "items": {"type": "object", "properties": {"bus": {"type": "integer"}}}},
  "inner":  {"type": "object", "required": ["a", "b"], "properties": {"a": {"type": "string"}, "b": {"type": "string"}, "z": {"type": "string"}}}
}}}`

// checkThing runs the checker on a JSON object against testSchema's Thing.
func checkThing(t *testing.T, obj map[string]any) ([]string, []string) {
	t.Helper()
	all, err := parseSchemas([]byte(testSchema))
	if err != nil {
		t.Fatalf("parseSchemas: %v", err)
	}
	c := &checker{}
	c.object(all["Thing"], obj, nil)
	return c.unknown, errorStrings(c.errs)
}

func errorStrings(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return m
}

func TestCheckerErrors(t *testing.T) {
	tests := []struct {
		name string
		obj  string
		want []string
	}{
		{"valid", `{"name": "abc", "mode": "Hard", "count": 3, "ratio": 0.5, "on": true,
			"id": "6f1c6a2e-0f6b-4f4e-9b9e-1d2c3b4a5f60", "at": "2024-05-01T10:00:00Z", "data": "aGk=",
			"size": "10Gi", "port": 80, "labels": {"a": "b"}, "raw": {"x": [1, {"y": null}]}, "open": {"n": 1, "k": "v"},
			"tags": ["a", "b"], "parts": [{"name": "a"}, {"name": "b"}], "refs": [{"kind": "A", "name": "x"}, {"kind": "B", "name": "x"}],
			"buses": [{"bus": 0}, {"bus": 1}], "inner": {"a": "", "b": ""}}`, nil},
		{"string given number", `{"name": 5}`, []string{`name: Invalid value: "integer": must be of type string`}},
		{"integer given string", `{"count": "3"}`, []string{`count: Invalid value: "string": must be of type integer`}},
		{"integer given fraction", `{"count": 1.5}`, []string{`count: Invalid value: "number": must be of type integer`}},
		{"number given bool", `{"ratio": true}`, []string{`ratio: Invalid value: "boolean": must be of type number`}},
		{"boolean given string", `{"on": "true"}`, []string{`on: Invalid value: "string": must be of type boolean`}},
		{"object given array", `{"inner": []}`, []string{`inner: Invalid value: "array": must be of type object`}},
		{"array given object", `{"tags": {}}`, []string{`tags: Invalid value: "object": must be of type array`}},
		{"null list item", `{"tags": [null]}`, []string{`tags[0]: Invalid value: "null": must be of type string`}},
		{"enum", `{"mode": "Medium"}`, []string{`mode: Unsupported value: "Medium": supported values: "Hard", "Soft"`}},
		{"pattern", `{"name": "A_b"}`, []string{`name: Invalid value: "A_b": must match '^[a-z0-9]{2,}$'`}},
		{"max length", `{"name": "abcdef"}`, []string{`name: Invalid value: "abcdef": must be no more than 5 characters`}},
		{"min length", `{"name": "ab"}`, []string{`name: Invalid value: "ab": must be at least 3 characters`}},
		{"minimum", `{"count": 0}`, []string{`count: Invalid value: 0: must be greater than or equal to 1`}},
		{"maximum", `{"count": 11}`, []string{`count: Invalid value: 11: must be less than or equal to 10`}},
		{"int32 range", `{"big": 2147483648}`, []string{`big: Invalid value: 2147483648: must fit in a 32-bit signed integer`}},
		{"uuid", `{"id": "not-a-uuid"}`, []string{`id: Invalid value: "not-a-uuid": must be a UUID`}},
		{"empty uuid is unset", `{"id": ""}`, nil},
		{"date-time", `{"at": "yesterday"}`, []string{`at: Invalid value: "yesterday": must be an RFC 3339 date-time`}},
		{"byte", `{"data": "%%%"}`, []string{`data: Invalid value: "%%%": must be base64-encoded`}},
		{"quantity string", `{"size": "10 gigs"}`, []string{`size: Invalid value: "10 gigs": must be a quantity, e.g. 10Gi or 500m`}},
		{"quantity number", `{"size": 1.5}`, nil},
		{"quantity bool", `{"size": true}`, []string{`size: Invalid value: "boolean": must be of type integer or string`}},
		{"int-or-string fraction", `{"port": 1.5}`, []string{`port: Invalid value: "number": must be of type integer or string`}},
		{"int-or-string string", `{"port": "http"}`, nil},
		{"map value", `{"labels": {"a": 1}}`, []string{`labels[a]: Invalid value: "integer": must be of type string`}},
		{"max items", `{"tags": ["a", "b", "c", "d"]}`, []string{`tags: Too many: 4: must have at most 3 items`}},
		{"set duplicate", `{"tags": ["a", "b", "a"]}`, []string{`tags[2]: Duplicate value: "a"`}},
		{"map key duplicate", `{"parts": [{"name": "a"}, {"name": "b"}, {"name": "a", "n": 2}]}`, []string{`parts[2].name: Duplicate value: "a"`}},
		{"integer map key duplicate", `{"buses": [{"bus": 1}, {"bus": 1}]}`, []string{`buses[1].bus: Duplicate value: 1`}},
		{"multi-key duplicate", `{"refs": [{"kind": "A", "name": "x"}, {"kind": "A", "name": "x"}]}`, []string{`refs[1]: Duplicate value: "A/x"`}},
		{"missing map key", `{"parts": [{"n": 1}, {"n": 2}]}`, []string{`parts[0].name: Required value`, `parts[1].name: Required value`}},
		{"required", `{"inner": {"a": "x"}}`, []string{`inner.b: Required value`}},
		{"null required", `{"inner": {"a": "x", "b": null}}`, []string{`inner.b: Required value`}},
		{"preserved object checks known fields", `{"open": {"n": "x", "k": 1}}`, []string{`open.n: Invalid value: "string": must be of type integer`}},
		{"ordered by name, depth first", `{"mode": "x", "count": "y", "inner": {"b": 1}}`, []string{
			`count: Invalid value: "string": must be of type integer`,
			`inner.a: Required value`,
			`inner.b: Invalid value: "integer": must be of type string`,
			`mode: Unsupported value: "x": supported values: "Hard", "Soft"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := checkThing(t, decode(t, tt.obj))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckerPrunes(t *testing.T) {
	tests := []struct {
		name        string
		obj         string
		wantUnknown []string
		wantObj     string
	}{
		{"top level", `{"name": "abc", "foo": 1}`, []string{"foo"}, `{"name": "abc"}`},
		{"nested", `{"inner": {"a": "", "b": "", "x": {"y": 1}}}`, []string{"inner.x"}, `{"inner": {"a": "", "b": ""}}`},
		{"in list items", `{"parts": [{"name": "a", "zz": 1}, {"name": "b", "aa": 2}]}`, []string{"parts[0].zz", "parts[1].aa"},
			`{"parts": [{"name": "a"}, {"name": "b"}]}`},
		{"sorted", `{"z": 1, "b": 2}`, []string{"b", "z"}, `{}`},
		{"preserved kept", `{"raw": {"any": {"thing": 1}}, "open": {"k": "v"}}`, nil, `{"raw": {"any": {"thing": 1}}, "open": {"k": "v"}}`},
		{"nulls dropped silently", `{"name": null, "inner": {"a": "", "b": "", "z": null}}`, nil, `{"inner": {"a": "", "b": ""}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decode(t, tt.obj)
			unknown, errs := checkThing(t, obj)
			if len(errs) > 0 {
				t.Fatalf("unexpected errors: %q", errs)
			}
			if diff := cmp.Diff(tt.wantUnknown, unknown); diff != "" {
				t.Errorf("unknown mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(decode(t, tt.wantObj), obj); diff != "" {
				t.Errorf("pruned object mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckerNumberForms(t *testing.T) {
	for _, v := range []any{int(3), int32(3), int64(3), float64(3), json.Number("3")} {
		_, errs := checkThing(t, map[string]any{"count": v})
		if len(errs) > 0 {
			t.Errorf("count %T(%v): unexpected errors %q", v, v, errs)
		}
	}
	_, errs := checkThing(t, map[string]any{"count": json.Number("3.5")})
	if diff := cmp.Diff([]string{`count: Invalid value: "number": must be of type integer`}, errs); diff != "" {
		t.Errorf("json.Number fraction (-want +got):\n%s", diff)
	}
}

func TestCheckSchemaUnknownKind(t *testing.T) {
	_, errs := CheckSchema("NoSuchKind", map[string]any{})
	if len(errs) != 1 || errs[0].Type != field.ErrorTypeInternal {
		t.Errorf("CheckSchema(NoSuchKind) errors = %v, want one internal error", errs)
	}
}
