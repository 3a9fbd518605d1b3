package structural

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// pkg is the parsed source of one Go package: just enough to resolve the types reachable
// from the kinds without type-checking (which would need the dependencies' sources).
type pkg struct {
	fset   *token.FileSet
	files  map[string]*ast.File // by base name
	types  map[string]*typeDecl
	consts map[string]string // string constants by name
}

// typeDecl is one named type with the comments that document it.
type typeDecl struct {
	name    string
	spec    *ast.TypeSpec
	file    *ast.File
	doc     []string // comment lines of the doc, markers included
	markers []string // marker lines (without "+") from the doc and the group just above it
}

// load parses the non-test, non-generated Go files of dir.
func load(dir string) (*pkg, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read package dir: %w", err)
	}
	p := &pkg{
		fset:   token.NewFileSet(),
		files:  map[string]*ast.File{},
		types:  map[string]*typeDecl{},
		consts: map[string]string{},
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") || strings.HasPrefix(n, "zz_generated") {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		f, err := parser.ParseFile(p.fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("parse: %w", err)
		}
		p.files[n] = f
		p.index(f)
	}
	if len(p.files) == 0 {
		return nil, fmt.Errorf("no Go files in %s", dir)
	}
	return p, nil
}

func (p *pkg) index(f *ast.File) {
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, s := range gd.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				doc := s.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				p.types[s.Name.Name] = &typeDecl{
					name:    s.Name.Name,
					spec:    s,
					file:    f,
					doc:     commentLines(doc),
					markers: append(markerLines(p.groupAbove(f, doc)), markerLines(commentLines(doc))...),
				}
			case *ast.ValueSpec:
				if gd.Tok != token.CONST {
					continue
				}
				for i, n := range s.Names {
					if i < len(s.Values) {
						if lit, ok := s.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							if v, err := strconv.Unquote(lit.Value); err == nil {
								p.consts[n.Name] = v
							}
						}
					}
				}
			}
		}
	}
}

// groupAbove returns the lines of the comment group separated from doc by exactly one
// blank line: kubebuilder puts markers such as +kubebuilder:object:root there.
func (p *pkg) groupAbove(f *ast.File, doc *ast.CommentGroup) []string {
	if doc == nil {
		return nil
	}
	start := p.fset.Position(doc.Pos()).Line
	for _, g := range f.Comments {
		if p.fset.Position(g.End()).Line == start-2 {
			return commentLines(g)
		}
	}
	return nil
}

// importPath resolves the package name used in f (e.g. "metav1") to its import path.
func importPath(f *ast.File, name string) (string, bool) {
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		local := filepath.Base(path)
		if imp.Name != nil {
			local = imp.Name.Name
		}
		if local == name {
			return path, true
		}
	}
	return "", false
}

// commentLines returns the text of each line of g without the comment markers.
func commentLines(g *ast.CommentGroup) []string {
	if g == nil {
		return nil
	}
	var lines []string
	for _, c := range g.List {
		t := c.Text
		switch {
		case strings.HasPrefix(t, "//"):
			lines = append(lines, strings.TrimPrefix(strings.TrimPrefix(t, "//"), " "))
		case strings.HasPrefix(t, "/*"):
			body := strings.TrimSuffix(strings.TrimPrefix(t, "/*"), "*/")
			for _, l := range strings.Split(body, "\n") {
				lines = append(lines, strings.TrimSpace(l))
			}
		}
	}
	return lines
}
