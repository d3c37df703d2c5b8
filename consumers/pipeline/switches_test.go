package pipeline_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/fintech/platform/schemas"
)

// commandVocabulary is what names a command: every Type* constant of the
// schemas package whose value is a type of schemas.CommandCatalog (their
// values are read from the source: a case names the constant), and every
// catalog data type.
func commandVocabulary(t *testing.T) (consts, dataTypes map[string]bool) {
	t.Helper()
	commands := map[string]bool{}
	dataTypes = map[string]bool{}
	for _, c := range schemas.CommandCatalog() {
		commands[c.Type] = true
		dataTypes[reflect.TypeOf(c.Data).Name()] = true
	}
	pkgs, err := parser.ParseDir(token.NewFileSet(), "../../schemas", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts = map[string]bool{}
	for _, pkg := range pkgs {
		ast.Inspect(pkg, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, id := range vs.Names {
				if i < len(vs.Values) && strings.HasPrefix(id.Name, "Type") {
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						if v, err := strconv.Unquote(lit.Value); err == nil && commands[v] {
							consts[id.Name] = true
						}
					}
				}
			}
			return true
		})
	}
	if len(consts) != len(commands) {
		t.Fatalf("found %d Type constants of the catalog's %d command types in schemas: the walk is broken", len(consts), len(commands))
	}
	return consts, dataTypes
}

// schemasName is the name x of an expression schemas.x, *schemas.x or
// []schemas.x.
func schemasName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.ArrayType:
			e = x.Elt
		case *ast.ParenExpr:
			e = x.X
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && id.Name == "schemas" {
				return x.Sel.Name
			}
			return ""
		default:
			return ""
		}
	}
}

// TestNoSwitchOverCommandTypes walks every consumer's source: a command
// type is declared once, on a pipeline.Table (see the package doc), so no
// consumer may switch over command types — neither a switch with a case
// naming a command's type constant nor a type switch with a case naming a
// command's data type. Switches over event types (the ClickHouse sink's
// routing) are allowed.
func TestNoSwitchOverCommandTypes(t *testing.T) {
	consts, dataTypes := commandVocabulary(t)
	fset := token.NewFileSet()
	var found []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var clauses []ast.Stmt
			var names map[string]bool
			switch s := n.(type) {
			case *ast.SwitchStmt:
				clauses, names = s.Body.List, consts
			case *ast.TypeSwitchStmt:
				clauses, names = s.Body.List, dataTypes
			default:
				return true
			}
			for _, c := range clauses {
				for _, e := range c.(*ast.CaseClause).List {
					if name := schemasName(e); names[name] {
						found = append(found, fset.Position(e.Pos()).String()+": case schemas."+name)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Fatalf("%d switch cases over command types in consumers; declare each command type once on a "+
			"pipeline.Table instead (consumers/pipeline/README.md):\n%s", len(found), strings.Join(found, "\n"))
	}
}
