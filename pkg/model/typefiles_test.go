package model

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// typeFiles are the files that define the API types and the kind registry.
var typeFiles = []string{
	"doc.go", "kinds.go", "power.go", "conditions.go", "refs.go",
	"virtualmachine.go", "virtualmachine_options.go", "virtualmachine_affinity.go",
	"virtualmachine_network.go", "virtualmachine_network_status.go", "virtualmachine_storage.go",
	"virtualmachine_hardware.go", "virtualmachine_bootstrap.go", "virtualmachine_status.go",
	"cloudconfig.go", "sysprep.go", "class.go", "image.go", "group.go", "encryption.go",
	"policy.go", "policy_match.go", "core.go", "cns.go",
}

func parseTypeFile(t *testing.T, name string, mode parser.Mode) *ast.File {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), name, nil, mode)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestTypeFilesImportOnlyAllowedPackages keeps the API types free of I/O dependencies: the
// standard library and k8s.io/apimachinery only.
func TestTypeFilesImportOnlyAllowedPackages(t *testing.T) {
	for _, name := range typeFiles {
		for _, imp := range parseTypeFile(t, name, parser.ImportsOnly).Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(path, "/")
			if strings.Contains(first, ".") && !strings.HasPrefix(path, "k8s.io/apimachinery/") {
				t.Errorf("%s imports %s", name, path)
			}
		}
	}
}

// TestEveryTypeAndFieldIsDocumented: the schema generator turns these comments into the
// descriptions kubectl explain prints, so none may be missing.
func TestEveryTypeAndFieldIsDocumented(t *testing.T) {
	for _, name := range typeFiles {
		f := parseTypeFile(t, name, parser.ParseComments)
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				if gd.Doc == nil && ts.Doc == nil {
					t.Errorf("%s: type %s has no doc comment", name, ts.Name)
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, field := range st.Fields.List {
					if field.Doc == nil || strings.TrimSpace(nonMarkerText(field.Doc)) == "" {
						t.Errorf("%s: a field of %s has no description", name, ts.Name)
					}
				}
			}
		}
	}
}

// nonMarkerText is a comment's text without its +marker lines.
func nonMarkerText(cg *ast.CommentGroup) string {
	var b strings.Builder
	for _, line := range strings.Split(cg.Text(), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "+") {
			b.WriteString(line)
		}
	}
	return b.String()
}
