// Package structural builds structural OpenAPI v3 schemas, like a CustomResourceDefinition's
// openAPIV3Schema, from the Go API types of a package, reading only their source.
//
// Every schema is fully inlined (no $ref). Descriptions come from doc comments (first
// paragraph); kubebuilder-style markers add validation, defaults and list semantics; json
// tags decide property names. Types of other packages (metav1, resource, intstr,
// encoding/json) are mapped by hand.
package structural

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/token"
	"sort"
	"strconv"
)

// kindsFile holds the kind registry whose Kind literals name the root types.
const kindsFile = "kinds.go"

// Generate parses the package in dir and returns `{"<Kind>": <schema>, ...}` for every kind
// its kinds.go registers, as indented JSON with sorted keys.
func Generate(dir string) ([]byte, error) {
	p, err := load(dir)
	if err != nil {
		return nil, err
	}
	kinds, err := p.kindNames()
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, k := range kinds {
		td, ok := p.types[k]
		if !ok {
			return nil, fmt.Errorf("kind %s has no type %s", k, k)
		}
		b := &builder{p: p}
		s, err := b.named(td)
		if err != nil {
			return nil, fmt.Errorf("kind %s: %w", k, err)
		}
		out[k] = s
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("encode schemas: %w", err)
	}
	return buf.Bytes(), nil
}

// kindNames finds the Kind field of every Kind literal in kinds.go: a composite literal
// with both a Kind and a Version key. Values are string literals or string constants.
func (p *pkg) kindNames() ([]string, error) {
	f, ok := p.files[kindsFile]
	if !ok {
		return nil, fmt.Errorf("package has no %s", kindsFile)
	}
	seen := map[string]bool{}
	var errs []error
	ast.Inspect(f, func(n ast.Node) bool {
		cl, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		kind, hasVersion := keyed(cl, "Kind"), keyed(cl, "Version") != nil
		if kind == nil || !hasVersion {
			return true
		}
		name, err := p.stringValue(kind)
		if err != nil {
			errs = append(errs, err)
			return true
		}
		seen[name] = true
		return true
	})
	if len(errs) > 0 {
		return nil, errs[0]
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("no Kind literals in %s", kindsFile)
	}
	var names []string
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

func keyed(cl *ast.CompositeLit, key string) ast.Expr {
	for _, e := range cl.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			if id, ok := kv.Key.(*ast.Ident); ok && id.Name == key {
				return kv.Value
			}
		}
	}
	return nil
}

func (p *pkg) stringValue(e ast.Expr) (string, error) {
	switch v := e.(type) {
	case *ast.BasicLit:
		if v.Kind == token.STRING {
			return strconv.Unquote(v.Value)
		}
	case *ast.Ident:
		if s, ok := p.consts[v.Name]; ok {
			return s, nil
		}
	}
	return "", fmt.Errorf("%s: Kind must be a string literal or constant", p.fset.Position(e.Pos()))
}
