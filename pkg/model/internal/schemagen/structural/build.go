package structural

import (
	"fmt"
	"go/ast"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// builder turns Go type expressions of one package into fully inlined schemas.
type builder struct {
	p     *pkg
	stack []string // named types being expanded, to reject recursive types
}

// named builds the schema of a named type of the package: its type expression, its doc's
// first paragraph as description, and its markers.
//
// A structural schema cannot recurse, so where a struct type reappears inside itself it
// becomes an object that preserves unknown fields, as CRDs spell recursive types.
func (b *builder) named(td *typeDecl) (map[string]any, error) {
	if slices.Contains(b.stack, td.name) {
		if _, isStruct := td.spec.Type.(*ast.StructType); !isStruct {
			return nil, fmt.Errorf("recursive type %s cannot be inlined (via %s)", td.name, strings.Join(b.stack, " → "))
		}
		s := map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
		if d := description(td.doc); d != "" {
			s["description"] = d
		}
		return s, nil
	}
	b.stack = append(b.stack, td.name)
	defer func() { b.stack = b.stack[:len(b.stack)-1] }()

	s, err := b.expr(td.spec.Type, td.file)
	if err != nil {
		return nil, err
	}
	if d := description(td.doc); d != "" {
		s["description"] = d
	}
	if err := applyMarkers(s, td.markers); err != nil {
		return nil, fmt.Errorf("type %s: %w", td.name, err)
	}
	return s, nil
}

func (b *builder) expr(e ast.Expr, f *ast.File) (map[string]any, error) {
	switch t := e.(type) {
	case *ast.ParenExpr:
		return b.expr(t.X, f)
	case *ast.StarExpr:
		return b.expr(t.X, f)
	case *ast.Ident:
		if s, ok := basic(t.Name); ok {
			return s, nil
		}
		if td, ok := b.p.types[t.Name]; ok {
			return b.named(td)
		}
		return nil, fmt.Errorf("unknown type %s", t.Name)
	case *ast.SelectorExpr:
		x, ok := t.X.(*ast.Ident)
		if !ok {
			return nil, fmt.Errorf("unsupported type expression %T", t.X)
		}
		path, ok := importPath(f, x.Name)
		if !ok {
			return nil, fmt.Errorf("package %s of %s.%s is not imported", x.Name, x.Name, t.Sel.Name)
		}
		return external(path, t.Sel.Name)
	case *ast.ArrayType:
		if id, ok := t.Elt.(*ast.Ident); ok && t.Len == nil && (id.Name == "byte" || id.Name == "uint8") {
			return map[string]any{"type": "string", "format": "byte"}, nil
		}
		items, err := b.expr(t.Elt, f)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": items}, nil
	case *ast.MapType:
		if !b.isString(t.Key) {
			return nil, fmt.Errorf("map keys must be strings")
		}
		values, err := b.expr(t.Value, f)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "object", "additionalProperties": values}, nil
	case *ast.StructType:
		return b.structType(t, f)
	case *ast.InterfaceType:
		return map[string]any{"x-kubernetes-preserve-unknown-fields": true}, nil
	}
	return nil, fmt.Errorf("unsupported type expression %T", e)
}

// isString reports whether e is string or a named type of the package whose underlying
// type is string.
func (b *builder) isString(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	if !ok {
		return false
	}
	if id.Name == "string" {
		return true
	}
	td, ok := b.p.types[id.Name]
	return ok && b.isString(td.spec.Type)
}

func (b *builder) structType(st *ast.StructType, f *ast.File) (map[string]any, error) {
	props := map[string]any{}
	var required []string
	for _, fld := range st.Fields.List {
		tag := reflect.StructTag(strings.Trim(tagValue(fld), "`")).Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if tag == "-" {
			continue
		}
		embedded := len(fld.Names) == 0
		if (embedded && name == "") || hasOption(opts, "inline") {
			sub, err := b.expr(fld.Type, f)
			if err != nil {
				return nil, fmt.Errorf("inlined field %s: %w", typeName(fld.Type), err)
			}
			if err := mergeInline(props, &required, sub); err != nil {
				return nil, fmt.Errorf("inlined field %s: %w", typeName(fld.Type), err)
			}
			continue
		}
		goName := typeName(fld.Type)
		if !embedded {
			goName = fld.Names[0].Name
		}
		if !ast.IsExported(goName) {
			continue
		}
		if name == "" {
			name = goName
		}
		fs, err := b.field(fld, f)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", goName, err)
		}
		props[name] = fs
		if isRequired(markerLines(fieldDoc(fld))) {
			required = append(required, name)
		}
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		sort.Strings(required)
		s["required"] = toAny(required)
	}
	return s, nil
}

// field builds one struct field: the type's schema, overridden by the field's own doc and
// markers.
func (b *builder) field(fld *ast.Field, f *ast.File) (map[string]any, error) {
	s, err := b.expr(fld.Type, f)
	if err != nil {
		return nil, err
	}
	doc := fieldDoc(fld)
	if d := description(doc); d != "" {
		s["description"] = d
	}
	if err := applyMarkers(s, markerLines(doc)); err != nil {
		return nil, err
	}
	return s, nil
}

// fieldDoc is the doc comment above a field, or its trailing line comment.
func fieldDoc(fld *ast.Field) []string {
	if fld.Doc != nil {
		return commentLines(fld.Doc)
	}
	return commentLines(fld.Comment)
}

// mergeInline copies the properties and required members of an inlined struct.
func mergeInline(props map[string]any, required *[]string, sub map[string]any) error {
	subProps, ok := sub["properties"].(map[string]any)
	if !ok {
		return fmt.Errorf("only structs can be inlined")
	}
	for k, v := range subProps {
		if _, dup := props[k]; dup {
			return fmt.Errorf("duplicate JSON field %q", k)
		}
		props[k] = v
	}
	if req, ok := sub["required"].([]any); ok {
		for _, r := range req {
			*required = append(*required, r.(string))
		}
	}
	return nil
}

func tagValue(fld *ast.Field) string {
	if fld.Tag == nil {
		return ""
	}
	return fld.Tag.Value
}

func hasOption(opts, want string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

// typeName is the bare name of a (possibly pointer or qualified) type expression.
func typeName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return typeName(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.SelectorExpr:
		return t.Sel.Name
	}
	return fmt.Sprintf("%T", e)
}

// basic maps Go's predeclared types.
func basic(name string) (map[string]any, bool) {
	switch name {
	case "string":
		return map[string]any{"type": "string"}, true
	case "bool":
		return map[string]any{"type": "boolean"}, true
	case "int32", "uint16", "int16", "int8", "uint8", "byte":
		return map[string]any{"type": "integer", "format": "int32"}, true
	case "int64", "uint32", "int", "uint", "uint64":
		return map[string]any{"type": "integer", "format": "int64"}, true
	case "float32":
		return map[string]any{"type": "number", "format": "float"}, true
	case "float64":
		return map[string]any{"type": "number", "format": "double"}, true
	case "any":
		return map[string]any{"x-kubernetes-preserve-unknown-fields": true}, true
	}
	return nil, false
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
