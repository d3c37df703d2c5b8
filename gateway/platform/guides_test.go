package platform

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
)

var updateGuides = flag.Bool("update-guides", false, "rewrite the generated parts of the guides")

// The error-code table of the errors guide sits between these markers.
const (
	codesBegin = "<!-- error codes: generated from schemas/errors.go by `go test ./gateway/platform -run TestGuideErrorCodes -update-guides` -->"
	codesEnd   = "<!-- end of error codes -->"
	errorsFile = "guides/03-errors.md"
)

// TestGuideErrorCodes fails when the errors guide does not list exactly the
// catalog of schemas/errors.go, by module, in the catalog's order.
func TestGuideErrorCodes(t *testing.T) {
	want := codesTable(t, filepath.Join("..", "..", "schemas", "errors.go"))
	raw, err := os.ReadFile(errorsFile)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	i, j := strings.Index(text, codesBegin), strings.Index(text, codesEnd)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the markers %q … %q", errorsFile, codesBegin, codesEnd)
	}
	got := text[i+len(codesBegin) : j]
	if got == want {
		return
	}
	if *updateGuides {
		if err := os.WriteFile(errorsFile, []byte(text[:i+len(codesBegin)]+want+text[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s is stale: run `go test ./gateway/platform -run TestGuideErrorCodes -update-guides`; want the table\n%s", errorsFile, want)
}

// codesTable renders the catalog: one row per section of the const block
// (its heading comment, "// Fiat (spec: …)." → Fiat) with its codes in the
// catalog's order.
func codesTable(t *testing.T, file string) string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	type section struct {
		name  string
		codes []string
	}
	var sections []section
	n := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			name := vs.Names[0].Name
			if !strings.HasPrefix(name, "Code") || len(vs.Values) != 1 {
				continue
			}
			lit, ok := vs.Values[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				continue
			}
			code, _ := strconv.Unquote(lit.Value)
			if vs.Doc != nil {
				// A doc comment that does not start with the const's name
				// is a section heading.
				if doc := strings.Join(strings.Fields(vs.Doc.Text()), " "); !strings.HasPrefix(doc, name+" ") {
					sections = append(sections, section{name: sectionName(doc)})
				}
			}
			if len(sections) == 0 {
				t.Fatalf("%s: %s before any section heading", file, name)
			}
			last := &sections[len(sections)-1]
			last.codes = append(last.codes, "`"+code+"`")
			n++
		}
	}
	if n < 40 {
		t.Fatalf("read only %d codes from %s", n, file)
	}
	var b strings.Builder
	b.WriteString("\n\n| module | codes |\n|---|---|\n")
	for _, s := range sections {
		b.WriteString("| " + s.name + " | " + strings.Join(s.codes, ", ") + " |\n")
	}
	b.WriteString("\n")
	return b.String()
}

var headingEnd = regexp.MustCompile(`[.(:]`)

// sectionName is a heading comment's name: "Fiat (spec: Errors)." → "Fiat";
// "Codes every module may answer." → "every module".
func sectionName(doc string) string {
	if strings.HasPrefix(doc, "Codes every module") {
		return "every module"
	}
	if loc := headingEnd.FindStringIndex(doc); loc != nil {
		doc = doc[:loc[0]]
	}
	return strings.TrimSpace(doc)
}

func guidesServer(t *testing.T) *server.Server {
	t.Helper()
	s := server.New(ratelimit.New(ratelimit.Limits{}, time.Now), prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	registerGuides(s.Root())
	return s
}

// TestGuidePages renders every guide and the index under the strict CSP.
func TestGuidePages(t *testing.T) {
	t.Parallel()
	guides, err := LoadGuides()
	if err != nil {
		t.Fatal(err)
	}
	wantSlugs := []string{"getting-started", "authentication", "errors", "idempotency", "pagination", "rate-limits", "webhooks", "event-stream", "analytics", "accounts-and-keys"}
	var slugs []string
	for _, g := range guides {
		slugs = append(slugs, g.Slug)
	}
	if strings.Join(slugs, ",") != strings.Join(wantSlugs, ",") {
		t.Errorf("guides %v, want %v", slugs, wantSlugs)
	}
	s := guidesServer(t)
	for _, p := range append([]string{GuidesPath}, func() []string {
		var out []string
		for _, g := range guides {
			out = append(out, GuidesPath+"/"+g.Slug)
		}
		return out
	}()...) {
		resp, err := s.App.Test(httptest.NewRequest(http.MethodGet, p, nil))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("%s: %d %s", p, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		csp := resp.Header.Get("Content-Security-Policy")
		m := regexp.MustCompile(`style-src 'nonce-([A-Za-z0-9_-]+)'`).FindStringSubmatch(csp)
		if m == nil || !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'nonce-") {
			t.Fatalf("%s: CSP %q", p, csp)
		}
		html := string(body)
		if strings.Count(html, "<style") != strings.Count(html, `<style nonce="`+m[1]+`"`) || strings.Contains(html, "<script") {
			t.Errorf("%s: a style without the nonce, or a script", p)
		}
		if !strings.Contains(html, `href="/docs/guides/webhooks"`) {
			t.Errorf("%s: no navigation", p)
		}
	}
	// Code blocks keep their language for the runner and readers.
	page, _ := s.App.Test(httptest.NewRequest(http.MethodGet, GuidesPath+"/getting-started", nil))
	body, _ := io.ReadAll(page.Body)
	if !strings.Contains(string(body), `<code class="language-sh">`) || !strings.Contains(string(body), `<code class="language-ts">`) {
		t.Errorf("getting-started lacks rendered sh and ts blocks")
	}
	resp, err := s.App.Test(httptest.NewRequest(http.MethodGet, GuidesPath+"/nope", nil))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown guide: %d", resp.StatusCode)
	}
}
