package schemas

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestErrorCatalog checks the catalog in errors.go: every code constant is
// a distinct snake_case value, so one code never has two names.
func TestErrorCatalog(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	snake := regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)
	seen := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || !strings.HasPrefix(vs.Names[0].Name, "Code") || len(vs.Values) != 1 {
			return true
		}
		lit, ok := vs.Values[0].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			t.Errorf("%s is not a string literal", vs.Names[0].Name)
			return true
		}
		v, _ := strconv.Unquote(lit.Value)
		if !snake.MatchString(v) {
			t.Errorf("%s = %q is not snake_case", vs.Names[0].Name, v)
		}
		if prev, dup := seen[v]; dup {
			t.Errorf("%s and %s are both %q", prev, vs.Names[0].Name, v)
		}
		seen[v] = vs.Names[0].Name
		return true
	})
	if len(seen) < 50 {
		t.Fatalf("found %d codes; the catalog is errors.go", len(seen))
	}
}

func TestErrorJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		extra map[string]any
		want  string
	}{
		{"plain", nil, `{"error":"not_found","message":"no such thing"}`},
		{"extra", map[string]any{"requestId": "r1", "error": "ignored"},
			`{"error":"not_found","message":"no such thing","requestId":"r1"}`},
		{"fields", map[string]any{"fields": map[string]string{"a": "b"}},
			`{"error":"not_found","fields":{"a":"b"},"message":"no such thing"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := string(ErrorJSON(CodeNotFound, "no such thing", tt.extra)); got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
}
