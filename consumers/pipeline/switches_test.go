package pipeline_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fintech/platform/schemas"
)

// commandVocabulary reads the schemas package's source for what names a
// command: every Type* constant whose value is not an event of
// EventCatalog (commands, appends, replies), and every data type whose doc
// says it is the data of one of those.
func commandVocabulary(t *testing.T) (consts, dataTypes map[string]bool) {
	t.Helper()
	events := map[string]bool{}
	for _, e := range schemas.EventCatalog() {
		events[e.Type] = true
	}
	pkgs, err := parser.ParseDir(token.NewFileSet(), "../../schemas", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	consts, dataTypes = map[string]bool{}, map[string]bool{}
	dataOf := regexp.MustCompile(`is the data of (?:an? )?(Type\w+)`)
	docs := map[string]string{} // data type name -> the Type constant its doc names
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok {
					continue
				}
				for _, spec := range gd.Specs {
					switch s := spec.(type) {
					case *ast.ValueSpec:
						for i, id := range s.Names {
							if gd.Tok != token.CONST || !strings.HasPrefix(id.Name, "Type") || i >= len(s.Values) {
								continue
							}
							lit, ok := s.Values[i].(*ast.BasicLit)
							if !ok || lit.Kind != token.STRING {
								continue
							}
							v, err := strconv.Unquote(lit.Value)
							if err != nil {
								t.Fatal(err)
							}
							if !events[v] {
								consts[id.Name] = true
							}
						}
					case *ast.TypeSpec:
						doc := s.Doc
						if doc == nil {
							doc = gd.Doc
						}
						if m := dataOf.FindStringSubmatch(doc.Text()); m != nil {
							docs[s.Name.Name] = m[1]
						}
					}
				}
			}
		}
	}
	for typ, c := range docs {
		if consts[c] {
			dataTypes[typ] = true
		}
	}
	if len(consts) < 15 || len(dataTypes) < 15 {
		t.Fatalf("found only %d command types and %d command data types in schemas: the walk is broken", len(consts), len(dataTypes))
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
