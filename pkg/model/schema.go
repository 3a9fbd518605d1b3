package model

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"sync"
)

//go:generate go run ./internal/schemagen

// generatedSchemas is `{"<Kind>": <schema>, ...}`, written by internal/schemagen from the
// Go types and their doc comments and markers.
//
//go:embed zz_generated.schema.json
var generatedSchemas []byte

// Schema is a structural OpenAPI v3 schema, the subset a CustomResourceDefinition's
// openAPIV3Schema uses, fully inlined. Its JSON form is the published one.
//
// The schemas returned by [SchemaFor] are shared: callers must not modify them.
type Schema struct {
	Type                 string             `json:"type,omitempty"`
	Description          string             `json:"description,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	AdditionalProperties *Schema            `json:"additionalProperties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	Enum                 []any              `json:"enum,omitempty"`
	Pattern              string             `json:"pattern,omitempty"`
	Minimum              *float64           `json:"minimum,omitempty"`
	Maximum              *float64           `json:"maximum,omitempty"`
	MinItems             *int64             `json:"minItems,omitempty"`
	MaxItems             *int64             `json:"maxItems,omitempty"`
	MinLength            *int64             `json:"minLength,omitempty"`
	MaxLength            *int64             `json:"maxLength,omitempty"`
	// Format is uuid, int32, int64, date-time, byte, double, float, or quantity (a
	// resource.Quantity, always together with IntOrString).
	Format  string          `json:"format,omitempty"`
	Default json.RawMessage `json:"default,omitempty"`
	// ListType is x-kubernetes-list-type: map (items keyed by ListMapKeys), set or atomic.
	ListType              string   `json:"x-kubernetes-list-type,omitempty"`
	ListMapKeys           []string `json:"x-kubernetes-list-map-keys,omitempty"`
	PreserveUnknownFields bool     `json:"x-kubernetes-preserve-unknown-fields,omitempty"`
	IntOrString           bool     `json:"x-kubernetes-int-or-string,omitempty"`

	// Derived once at load so that checking does not recompile or re-decode.
	pattern      *regexp.Regexp
	defaultValue any
	enumStrings  []string
}

// SchemaFor returns the schema of the objects of a kind (e.g. "VirtualMachine").
func SchemaFor(kind string) (*Schema, bool) {
	all, err := loadSchemas()
	if err != nil {
		return nil, false
	}
	s, ok := all[kind]
	return s, ok
}

var loadSchemas = sync.OnceValues(func() (map[string]*Schema, error) {
	return parseSchemas(generatedSchemas)
})

func parseSchemas(data []byte) (map[string]*Schema, error) {
	var all map[string]*Schema
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, fmt.Errorf("decode generated schemas: %w", err)
	}
	for kind, s := range all {
		if err := s.prepare(); err != nil {
			return nil, fmt.Errorf("schema of %s: %w", kind, err)
		}
	}
	return all, nil
}

// prepare fills the derived fields of s and everything below it.
func (s *Schema) prepare() error {
	if s.Pattern != "" {
		re, err := regexp.Compile(s.Pattern)
		if err != nil {
			return fmt.Errorf("pattern: %w", err)
		}
		s.pattern = re
	}
	if len(s.Default) > 0 {
		if err := json.Unmarshal(s.Default, &s.defaultValue); err != nil {
			return fmt.Errorf("default: %w", err)
		}
	}
	for _, e := range s.Enum {
		s.enumStrings = append(s.enumStrings, fmt.Sprint(e))
	}
	for name, p := range s.Properties {
		if err := p.prepare(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	for _, sub := range []*Schema{s.Items, s.AdditionalProperties} {
		if sub != nil {
			if err := sub.prepare(); err != nil {
				return err
			}
		}
	}
	return nil
}
