package fiat_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	cfiat "github.com/fintech/platform/consumers/fiat"
)

// fiatCommandTypes reads the schemas package's source for the command
// types of fiat.commands: every Type constant whose value starts with
// "fiat." or whose own comment says it is a command on fiat.commands.
func fiatCommandTypes(t *testing.T) []string {
	t.Helper()
	pkgs, err := parser.ParseDir(token.NewFileSet(), "../../schemas", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, pkg := range pkgs {
		for name, f := range pkg.Files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, id := range vs.Names {
						if !strings.HasPrefix(id.Name, "Type") || i >= len(vs.Values) {
							continue
						}
						lit, ok := vs.Values[i].(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						v, err := strconv.Unquote(lit.Value)
						if err != nil {
							t.Fatal(err)
						}
						if strings.HasPrefix(v, "fiat.") || strings.Contains(vs.Doc.Text(), "fiat.commands") {
							out = append(out, v)
						}
					}
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestDeclarationsCoverFiatCommands fails when a command type of
// fiat.commands has no declaration in the applier (or one is declared that
// the schemas do not define).
func TestDeclarationsCoverFiatCommands(t *testing.T) {
	h, err := cfiat.NewHandler(caps, time.Now, quiet)
	if err != nil {
		t.Fatal(err)
	}
	want := fiatCommandTypes(t)
	if len(want) < 11 {
		t.Fatalf("found only %d fiat command types in schemas: %v", len(want), want)
	}
	got := slices.Sorted(slices.Values(h.Types()))
	if !slices.Equal(got, want) {
		t.Fatalf("declared command types %v, schemas define %v", got, want)
	}
}
