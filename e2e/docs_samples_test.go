package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestDocsCodeSamplesCompile: every string schema Redoc's sampler would
// fill with "stringstring…" (a minLength over 6) or a text its pattern
// refuses has an example; every operation of the complete document has
// a curl and a TypeScript SDK sample, and every TypeScript sample compiles
// with the SDK's own tsc setup (tsconfig.json: strict,
// noUncheckedIndexedAccess) against the SDK's sources: its paths, its
// parameters and bodies are the SDK's types, not prose.
func TestDocsCodeSamplesCompile(t *testing.T) {
	t.Parallel() // a long test: see "Parallel tests" in main_test.go
	p := shared(t)
	var doc struct {
		Paths map[string]map[string]struct {
			Samples []struct {
				Lang   string `json:"lang"`
				Source string `json:"source"`
			} `json:"x-codeSamples"`
		} `json:"paths"`
	}
	r := p.Get(t, "/api/platform/openapi.full.json", "")
	r.Decode(t, &doc)
	var whole any
	r.Decode(t, &whole)
	if bare := placeholderSchemas(whole, "#"); len(bare) > 0 {
		t.Errorf("%d string schemas with a pattern or a length floor have no example (Redoc would show stringstring…): %v", len(bare), bare)
	}
	if _, err := os.Stat(filepath.Join(sdkDir, "node_modules", "typescript", "bin", "tsc")); err != nil {
		sdkRun(t, nil, "npm", "ci", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund")
	}
	// A directory inside the SDK, so the samples resolve its sources and
	// its node_modules; each sample is a module of its own (top-level await).
	dir, err := os.MkdirTemp(sdkDir, ".samples-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	const pkg = `from "@fintech-platform/sdk";`
	var keys []string
	for path, item := range doc.Paths {
		for method := range item {
			keys = append(keys, method+" "+path)
		}
	}
	sort.Strings(keys)
	for i, key := range keys {
		method, path, _ := strings.Cut(key, " ")
		langs := map[string]string{}
		for _, s := range doc.Paths[path][method].Samples {
			langs[s.Lang] = s.Source
		}
		if !strings.Contains(langs["Shell"], "curl ") || !strings.Contains(langs["TypeScript"], pkg) {
			t.Errorf("%s: samples %v lack a curl command or a TypeScript SDK call", key, langs)
			continue
		}
		src := "// " + key + "\n" + strings.Replace(langs["TypeScript"], pkg, `from "../src/index.js";`, 1)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("sample%03d.ts", i)), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tsconfig := `{"extends": "../tsconfig.json", "compilerOptions": {"noEmit": true, "rootDir": ".."}, "include": ["*.ts"]}`
	if err := os.WriteFile(filepath.Join(dir, "tsconfig.json"), []byte(tsconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runCmd(sdkDir, nil, "node", filepath.Join("node_modules", "typescript", "bin", "tsc"), "-p", filepath.Join(filepath.Base(dir), "tsconfig.json"))
	if err != nil {
		t.Fatalf("the TypeScript samples of %d operations do not compile: %v\n%s", len(keys), err, out)
	}
	t.Logf("%d operations: each has a curl and a TypeScript sample; the TypeScript samples compile", len(keys))
}

// placeholderSchemas lists the string schemas under v with a pattern or a
// minLength over 6 and neither an example nor an enum.
func placeholderSchemas(v any, at string) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		_, example := x["example"]
		_, pattern := x["pattern"]
		min, _ := x["minLength"].(float64)
		if x["type"] == "string" && !example && x["enum"] == nil && (pattern || min > 6) {
			out = append(out, at)
		}
		for k, e := range x {
			if k != "example" && k != "x-codeSamples" {
				out = append(out, placeholderSchemas(e, at+"/"+k)...)
			}
		}
	case []any:
		for i, e := range x {
			out = append(out, placeholderSchemas(e, fmt.Sprintf("%s/%d", at, i))...)
		}
	}
	return out
}
