package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenAPIDocumentsLintClean runs Redocly CLI (pinned in e2e/tools, its
// recommended rules, no redocly.yaml) over the full document and
// every module slice the index lists, and the complete document of every
// module: no errors and no warnings.
func TestOpenAPIDocumentsLintClean(t *testing.T) {
	redocly := redoclyCLI(t)
	p := shared(t)
	var index struct {
		Modules []struct {
			Name    string `json:"name"`
			OpenAPI string `json:"openapi"`
		} `json:"modules"`
	}
	p.Get(t, "/api/platform/openapi.json", "").Decode(t, &index)
	docs := map[string]string{"full": "/api/openapi.json", "platform-index": "/api/platform/openapi.json",
		"complete": "/api/platform/openapi.full.json"}
	for _, m := range index.Modules {
		docs[m.Name] = m.OpenAPI
	}
	if len(index.Modules) < 6 {
		t.Fatalf("index lists %d modules", len(index.Modules))
	}
	delete(docs, "platform-index") // the index is not an OpenAPI document
	dir := t.TempDir()
	var files []string
	for name, path := range docs {
		r := p.Get(t, path, "")
		if r.Status != http.StatusOK || !json.Valid(r.Body) {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
		f := filepath.Join(dir, name+".json")
		if err := os.WriteFile(f, r.Body, 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	cmd := exec.Command(redocly, append([]string{"lint", "--extends=recommended", "--format=json"}, files...)...)
	cmd.Dir = dir // no redocly.yaml here: the recommended rules as they are, nothing turned off
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	// One JSON report per file: totals and the problems found.
	type problem struct {
		RuleID   string `json:"ruleId"`
		Severity string `json:"severity"`
		Message  string `json:"message"`
		Location []struct {
			Source struct {
				Ref string `json:"ref"`
			} `json:"source"`
			Pointer string `json:"pointer"`
		} `json:"location"`
	}
	var reports int
	var errs, warns int
	var problems []string
	dec := json.NewDecoder(&stdout)
	for {
		var rep struct {
			Totals struct {
				Errors   int `json:"errors"`
				Warnings int `json:"warnings"`
			} `json:"totals"`
			Problems []problem `json:"problems"`
		}
		if err := dec.Decode(&rep); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("redocly output: %v (exit %v)\n%s", err, runErr, stderr.String())
		}
		reports++
		errs += rep.Totals.Errors
		warns += rep.Totals.Warnings
		for _, p := range rep.Problems {
			where := ""
			if len(p.Location) > 0 {
				where = p.Location[0].Source.Ref + p.Location[0].Pointer
			}
			problems = append(problems, fmt.Sprintf("%s %s %s: %s", p.Severity, p.RuleID, where, p.Message))
		}
	}
	if reports != len(files) {
		t.Fatalf("redocly reported on %d of %d documents (exit %v)\n%s", reports, len(files), runErr, stderr.String())
	}
	if errs != 0 || warns != 0 || runErr != nil {
		t.Fatalf("redocly lint: %d errors, %d warnings (exit %v):\n%s", errs, warns, runErr, strings.Join(problems, "\n"))
	}
	t.Logf("redocly lint: %d documents, 0 errors, 0 warnings", reports)
}

// redoclyCLI returns the Redocly CLI that e2e/tools pins (`npm ci` there
// installs it; the Makefile runs it before the tests). Without it the test
// fails under CI and reports how to install it otherwise.
func redoclyCLI(t *testing.T) string {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join("tools", "node_modules", ".bin", "redocly"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("npm is needed to install the pinned Redocly CLI (e2e/tools): %v", err)
	}
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--prefer-offline")
	cmd.Dir = "tools"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in e2e/tools: %v\n%s", err, out)
	}
	return bin
}
