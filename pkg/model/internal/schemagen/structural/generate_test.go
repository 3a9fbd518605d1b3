package structural

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func generateFixture(t *testing.T) map[string]any {
	t.Helper()
	data, err := Generate("testdata/fixture")
	if err != nil {
		t.Fatalf("Generate(fixture) error: %v", err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("generated JSON does not parse: %v", err)
	}
	return out
}

// at walks a decoded schema along keys; "." separates them.
func at(t *testing.T, v any, path string) any {
	t.Helper()
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: %q is not under an object", path, k)
		}
		if v, ok = m[k]; !ok {
			t.Fatalf("%s: no key %q", path, k)
		}
	}
	return v
}

func TestGenerateFixture(t *testing.T) {
	schemas := generateFixture(t)
	spec := "Widget.properties.spec.properties."
	tests := []struct {
		path string
		want any
	}{
		{"Widget.description", "Widget is a test kind whose description spans two lines."},
		{"Widget.type", "object"},
		{"Widget.properties.apiVersion.type", "string"},
		{"Widget.properties.kind.type", "string"},
		{"Widget.properties.metadata.properties.labels.additionalProperties.type", "string"},
		{"Widget.properties.metadata.properties.creationTimestamp.format", "date-time"},
		{"Widget.properties.metadata.properties.ownerReferences.x-kubernetes-list-map-keys", []any{"uid"}},
		{"Widget.properties.metadata.properties.managedFields.items.x-kubernetes-preserve-unknown-fields", true},
		{"Widget.properties.spec.description", "WidgetSpec is the desired state of a widget."},
		{"Widget.properties.spec.required", []any{"name"}},
		{spec + "name.description", "Name names the widget."},
		{spec + "name.pattern", "^[a-z0-9]{2,}$"},
		{spec + "name.maxLength", 15.0},
		{spec + "mode.description", "Mode is the mode."},
		{spec + "mode.enum", []any{"Hard", "Soft", "TrySoft"}},
		{spec + "mode.default", "TrySoft"},
		{spec + "version.minimum", 13.0},
		{spec + "version.format", "int32"},
		{spec + "ratio.description", "Ratio has a trailing comment."},
		{spec + "ratio.type", "number"},
		{spec + "id.format", "uuid"},
		{spec + "parts.x-kubernetes-list-type", "map"},
		{spec + "parts.x-kubernetes-list-map-keys", []any{"name"}},
		{spec + "parts.maxItems", 3.0},
		{spec + "parts.items.required", []any{"name"}},
		{spec + "parts.items.properties.count.default", 1.0},
		{spec + "tags.x-kubernetes-list-type", "set"},
		{spec + "labels.additionalProperties.type", "string"},
		{spec + "size.x-kubernetes-int-or-string", true},
		{spec + "size.format", "quantity"},
		{spec + "port.x-kubernetes-int-or-string", true},
		{spec + "raw.x-kubernetes-preserve-unknown-fields", true},
		{spec + "selector.properties.matchLabels.type", "object"},
		{spec + "delay.type", "string"},
		{spec + "data.format", "byte"},
		{spec + "enabled.default", true},
		{spec + "extra.description", "Extra comes from an inlined struct."},
		{"Widget.properties.status.properties.conditions.items.required", []any{"lastTransitionTime", "message", "reason", "status", "type"}},
		{"Widget.properties.status.properties.since.format", "date-time"},
		{"Widget.properties.status.properties.anything.x-kubernetes-preserve-unknown-fields", true},
		{"Gadget.required", []any{"provisioner"}},
		{"Gadget.properties.parameters.additionalProperties.type", "string"},
		{"Gadget.properties.match.properties.op.type", "string"},
		{"Gadget.properties.match.properties.match.items.type", "object"},
		{"Gadget.properties.match.properties.match.items.x-kubernetes-preserve-unknown-fields", true},
		{"Gadget.properties.match.properties.match.items.description", "Match is a recursive condition."},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, at(t, schemas, tt.path)); diff != "" {
				t.Errorf("%s mismatch (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}

func TestGenerateSkipsHiddenFields(t *testing.T) {
	spec := at(t, generateFixture(t), "Widget.properties.spec.properties").(map[string]any)
	for _, name := range []string{"Ignored", "hidden", "Embedded", "-"} {
		if _, ok := spec[name]; ok {
			t.Errorf("spec has property %q, want it skipped", name)
		}
	}
	if _, ok := spec["mode"].(map[string]any)["x-kubernetes-list-type"]; ok {
		t.Errorf("mode has a list type")
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	a, err := Generate("testdata/fixture")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate("testdata/fixture")
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Errorf("two runs differ")
	}
	if !strings.HasPrefix(string(a), "{\n  \"Gadget\"") {
		t.Errorf("output is not indented with sorted keys: %.40q", a)
	}
}

func TestGenerateErrors(t *testing.T) {
	const kinds = `package p
type Kind struct{ Version, Kind string }
func Kinds() []Kind { return []Kind{{Version: "v1", Kind: "Thing"}} }
`
	tests := []struct {
		name, types, wantErr string
	}{
		{"recursive non-struct", `package p
type Thing struct { L List ` + "`json:\"l\"`" + ` }
type List []List`, "recursive type List"},
		{"unknown external", `package p
import "time"
type Thing struct { At time.Time ` + "`json:\"at\"`" + ` }`, "no schema for external type time.Time"},
		{"enum on list", `package p
type Thing struct {
	// +kubebuilder:validation:Enum=a;b
	L []string ` + "`json:\"l\"`" + `
}`, "enum on array"},
		{"unsupported validation marker", `package p
type Thing struct {
	// +kubebuilder:validation:ExclusiveMaximum=true
	N int32 ` + "`json:\"n\"`" + `
}`, "unsupported validation marker"},
		{"default outside enum", `package p
// +kubebuilder:validation:Enum=a;b
type Mode string
type Thing struct {
	// +kubebuilder:default=c
	M Mode ` + "`json:\"m\"`" + `
}`, "not in enum"},
		{"bad pattern", `package p
type Thing struct {
	// +kubebuilder:validation:Pattern=` + "`^(a$`" + `
	S string ` + "`json:\"s\"`" + `
}`, "pattern does not compile"},
		{"missing kind type", `package p
type Other struct{}`, "kind Thing has no type Thing"},
		{"non-string map key", `package p
type Thing struct { M map[int]string ` + "`json:\"m\"`" + ` }`, "map keys must be strings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "kinds.go", kinds)
			write(t, dir, "types.go", tt.types)
			_, err := Generate(dir)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Generate() error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestDescription(t *testing.T) {
	tests := []struct {
		lines []string
		want  string
	}{
		{[]string{"A is", "two lines."}, "A is two lines."},
		{[]string{"", "First.", "", "Second paragraph."}, "First."},
		{[]string{"+kubebuilder:default=1", "Only text."}, "Only text."},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := description(tt.lines); got != tt.want {
			t.Errorf("description(%q) = %q, want %q", tt.lines, got, tt.want)
		}
	}
}

func write(t *testing.T, dir, name, src string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}
