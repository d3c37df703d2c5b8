package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// modulePath is the import path of this module.
const modulePath = "github.com/fintech/platform"

// TestLayering enforces the package layering of architecture.md: the gateway
// talks to consumers only through Kafka and the contracts in schemas, so no
// package under gateway/ imports one under consumers/; storage does not know
// the HTTP layer; schemas is the bottom of the module and imports nothing of
// it. Test imports count too.
func TestLayering(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", "list", "-json", modulePath+"/...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var bad []string
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath, Dir                    string
			Imports, TestImports, XTestImports []string
			GoFiles, TestGoFiles, XTestGoFiles []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding go list: %v", err)
		}
		for _, imp := range append(append(p.Imports, p.TestImports...), p.XTestImports...) {
			if why := forbidden(p.ImportPath, imp); why != "" {
				bad = append(bad, p.ImportPath+" imports "+imp+": "+why)
			}
		}
		if p.ImportPath == modulePath+"/storage" || strings.HasPrefix(p.ImportPath, modulePath+"/storage/") {
			files := append(append(p.GoFiles, p.TestGoFiles...), p.XTestGoFiles...)
			for _, at := range recordCalls(t, p.Dir, files) {
				bad = append(bad, at+": storage uses topics.Record; it stores the payload (schemas.Encode) and builds no Kafka record")
			}
		}
	}
	bad = append(bad, operatorImports(t)...)
	for _, b := range bad {
		t.Error(b)
	}
}

// operatorGateway is what the operator commands of cmd/platform (the
// *_cmd.go files) may import from gateway/: they run beside the HTTP layer,
// not through it. admin create still checks passwords and e-mails with the
// gateway's rules; nothing else may join it.
var operatorGateway = map[string][]string{
	"admin_cmd.go": {"gateway/auth", "gateway/bind", "gateway/identity"},
}

// operatorImports lists the gateway imports of the operator command files
// that operatorGateway does not allow (the dlq command calls topics/dlq,
// as the console does).
func operatorImports(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*_cmd.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no operator command files (%v)", err)
	}
	var bad []string
	for _, f := range files {
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range parsed.Imports {
			imp := strings.Trim(spec.Path.Value, `"`)
			if !strings.HasPrefix(imp, modulePath+"/gateway/") && imp != modulePath+"/gateway" {
				continue
			}
			if !slices.Contains(operatorGateway[f], strings.TrimPrefix(imp, modulePath+"/")) {
				bad = append(bad, "cmd/platform/"+f+" imports "+imp+": an operator command reaches the platform through its own packages (storage, topics), not the HTTP layer")
			}
		}
	}
	return bad
}

// forbidden says why package pkg may not import imp, or "" when it may.
func forbidden(pkg, imp string) string {
	under := func(path, dir string) bool {
		full := modulePath + "/" + dir
		return path == full || strings.HasPrefix(path, full+"/")
	}
	switch {
	case under(pkg, "gateway") && under(imp, "consumers"):
		return "the gateway reaches consumers only through Kafka; share the contract in schemas/<module>.go"
	case under(pkg, "storage") && under(imp, "gateway"):
		return "storage does not depend on the HTTP layer"
	case under(pkg, "storage") && strings.HasPrefix(imp, "github.com/twmb/franz-go/"):
		return "storage stores bytes and builds no Kafka record; that is for consumers and topics"
	case under(pkg, "schemas") && strings.HasPrefix(imp, modulePath+"/") && !under(imp, "schemas"):
		return "schemas is the bottom layer and imports nothing else of the module"
	}
	return ""
}

func TestForbidden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pkg, imp string
		bad      bool
	}{
		{"gateway/fiat", "consumers/fiat", true},
		{"gateway", "consumers/pipeline", true},
		{"gateway/fiat", "storage/fiat", false},
		{"gateway/fiat", "schemas", false},
		{"storage/fiat", "gateway/apierr", true},
		{"storage/fiat", "schemas", false},
		{"schemas", "topics", true},
		{"schemas", "schemas/testdata", false},
		{"consumers/fiat", "storage/fiat", false},
		{"gatewayx", "consumers/fiat", false},
	}
	for _, tt := range tests {
		got := forbidden(modulePath+"/"+tt.pkg, modulePath+"/"+tt.imp) != ""
		if got != tt.bad {
			t.Errorf("forbidden(%s, %s) = %v, want %v", tt.pkg, tt.imp, got, tt.bad)
		}
	}
	if forbidden(modulePath+"/schemas", "encoding/json") != "" {
		t.Error("schemas may import the standard library")
	}
	if forbidden(modulePath+"/storage/pipeline", "github.com/twmb/franz-go/pkg/kgo") == "" {
		t.Error("storage may not import franz-go")
	}
	if forbidden(modulePath+"/consumers/pipeline", "github.com/twmb/franz-go/pkg/kgo") != "" {
		t.Error("consumers may import franz-go")
	}
}

// recordCalls returns file:line of every use of topics.Record (under any
// import name) in the files of dir.
func recordCalls(t *testing.T, dir string, files []string) []string {
	t.Helper()
	var at []string
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		local := ""
		for _, imp := range f.Imports {
			if imp.Path.Value == `"`+modulePath+`/topics"` {
				local = "topics"
				if imp.Name != nil {
					local = imp.Name.Name
				}
			}
		}
		if local == "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Record" {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == local {
					at = append(at, fset.Position(sel.Pos()).String())
				}
			}
			return true
		})
	}
	return at
}

func TestRecordCalls(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := "package x\n\nimport tp \"" + modulePath + "/topics\"\n\nvar f = tp.Record\nvar g = tp.RawRecord\n"
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := recordCalls(t, dir, []string{"x.go"}); len(got) != 1 || !strings.HasSuffix(got[0], "x.go:5:9") {
		t.Fatalf("recordCalls = %v, want the one use of tp.Record at x.go:5:9", got)
	}
}

// sqlText matches the statements a re-anchoring source or a store would
// hold; keywords are upper case as our SQL is written, so prose in a help
// text ("select the ...") does not match.
var sqlText = regexp.MustCompile(`\bSELECT\b[\s\S]*\bFROM\b|\bINSERT INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE FROM\b|\b(CREATE|ALTER|DROP) (TABLE|INDEX)\b`)

// TestWiringHoldsNoSQL keeps SQL in storage/<module> (README, "Adding a
// module", step 6): cmd/platform/wire_*.go only wires, so a query written
// there (a re-anchoring source's, say) fails here, named by file and line.
func TestWiringHoldsNoSQL(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("wire_*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no wire_*.go files (%v)", err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && sqlText.MatchString(s) {
				t.Errorf("%s holds SQL; move it to storage/<module> and refer to it by name", fset.Position(lit.Pos()))
			}
			return true
		})
	}
}

func TestSQLText(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"SELECT a FROM t":                    true,
		"\nSELECT x,\n y\nFROM t WHERE z":    true,
		"INSERT INTO t VALUES (1)":           true,
		"UPDATE t SET a = 1":                 true,
		"DELETE FROM t":                      true,
		"select the admins of a module":      false,
		"ledger: subcommands: reanchor":      false,
		"UPDATE the keys, then SELECT a row": false,
	} {
		if got := sqlText.MatchString(s); got != want {
			t.Errorf("sqlText(%q) = %v, want %v", s, got, want)
		}
	}
}
