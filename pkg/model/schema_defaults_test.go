package model

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const defaultsSchema = `{"Thing": {"type": "object", "properties": {
  "mode":  {"type": "string", "default": "TrySoft"},
  "count": {"type": "integer", "default": 1},
  "opts":  {"type": "object", "properties": {"on": {"type": "boolean", "default": true}, "n": {"type": "integer"}}},
  "made":  {"type": "object", "default": {}, "properties": {"key": {"type": "string", "default": "password"}}},
  "list":  {"type": "array", "items": {"type": "object", "properties": {"removable": {"type": "boolean", "default": true}}}},
  "byKey": {"type": "object", "additionalProperties": {"type": "object", "properties": {"perm": {"type": "string", "default": "0644"}}}}
}}}`

func TestApplyDefaultsWalk(t *testing.T) {
	tests := []struct {
		name, obj, want string
	}{
		{"fills absent top-level members", `{}`,
			`{"mode": "TrySoft", "count": 1, "made": {"key": "password"}}`},
		{"keeps given values", `{"mode": "Hard", "count": 5, "made": {"key": "k"}}`,
			`{"mode": "Hard", "count": 5, "made": {"key": "k"}}`},
		{"null counts as absent", `{"mode": null}`,
			`{"mode": "TrySoft", "count": 1, "made": {"key": "password"}}`},
		{"does not create parents", `{"mode": "Hard", "count": 2, "made": {}}`,
			`{"mode": "Hard", "count": 2, "made": {"key": "password"}}`},
		{"fills inside present parents", `{"mode": "Hard", "count": 2, "made": {}, "opts": {"n": 3}}`,
			`{"mode": "Hard", "count": 2, "made": {"key": "password"}, "opts": {"n": 3, "on": true}}`},
		{"list items", `{"mode": "Hard", "count": 2, "made": {}, "list": [{}, {"removable": false}]}`,
			`{"mode": "Hard", "count": 2, "made": {"key": "password"}, "list": [{"removable": true}, {"removable": false}]}`},
		{"map values", `{"mode": "Hard", "count": 2, "made": {}, "byKey": {"/etc/x": {}}}`,
			`{"mode": "Hard", "count": 2, "made": {"key": "password"}, "byKey": {"/etc/x": {"perm": "0644"}}}`},
		{"ignores shapes that do not fit", `{"mode": "Hard", "count": 2, "made": {}, "opts": "x", "list": {}}`,
			`{"mode": "Hard", "count": 2, "made": {"key": "password"}, "opts": "x", "list": {}}`},
	}
	all, err := parseSchemas([]byte(defaultsSchema))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decode(t, tt.obj)
			applyDefaults(all["Thing"], obj)
			if diff := cmp.Diff(decode(t, tt.want), obj); diff != "" {
				t.Errorf("defaulted object mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyDefaultsDoesNotShareValues(t *testing.T) {
	all, err := parseSchemas([]byte(defaultsSchema))
	if err != nil {
		t.Fatal(err)
	}
	a, b := map[string]any{}, map[string]any{}
	applyDefaults(all["Thing"], a)
	applyDefaults(all["Thing"], b)
	a["made"].(map[string]any)["key"] = "changed"
	if got := b["made"].(map[string]any)["key"]; got != "password" {
		t.Errorf("second object's default = %v after changing the first, want password", got)
	}
	if got := all["Thing"].Properties["made"].defaultValue.(map[string]any); len(got) != 0 {
		t.Errorf("schema default was modified: %v", got)
	}
}
