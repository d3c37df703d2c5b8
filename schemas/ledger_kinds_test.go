package schemas

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestModuleLedgerKindsComplete reads this package's source for LedgerKind*
// constants: every one must be listed by ModuleLedgerKinds, be refused from
// users (IsModuleKind), and be listed once.
func TestModuleLedgerKindsComplete(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]string{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, "LedgerKind") || i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					v, _ := strconv.Unquote(lit.Value)
					declared[name.Name] = v
				}
			}
			return true
		})
	}
	if len(declared) < 10 {
		t.Fatalf("found only %d LedgerKind constants: %v", len(declared), declared)
	}
	listed := ModuleLedgerKinds()
	for name, kind := range declared {
		if !slices.Contains(listed, kind) {
			t.Errorf("%s = %q is not listed by ModuleLedgerKinds", name, kind)
		}
		if !IsModuleKind(kind) {
			t.Errorf("%s = %q: IsModuleKind is false, so a user could post it", name, kind)
		}
	}
	seen := map[string]bool{}
	for _, k := range listed {
		if seen[k] {
			t.Errorf("ModuleLedgerKinds lists %q twice", k)
		}
		seen[k] = true
	}
	if len(listed) != len(declared) {
		t.Errorf("ModuleLedgerKinds lists %d kinds, the package declares %d", len(listed), len(declared))
	}
}
