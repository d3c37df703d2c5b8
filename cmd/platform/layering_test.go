package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
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
			ImportPath                         string
			Imports, TestImports, XTestImports []string
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
}
