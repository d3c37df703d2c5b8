package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

// guidesDir holds the guides the binary serves at /docs/guides.
const guidesDir = "../gateway/platform/guides"

// guideBaseURL is the address the guides are written for (`make run`).
const guideBaseURL = "http://127.0.0.1:8080"

// guideBlock is one fenced code block of a guide.
type guideBlock struct {
	lang, code string
	line       int
}

var fence = regexp.MustCompile("^```([A-Za-z0-9]*)\\s*$")

// guideBlocks reads the fenced blocks of a guide. Every fence names its
// language: sh and ts blocks are run, text and json are not.
func guideBlocks(t *testing.T, file string, raw []byte) []guideBlock {
	t.Helper()
	var out []guideBlock
	var cur *guideBlock
	for i, line := range strings.Split(string(raw), "\n") {
		m := fence.FindStringSubmatch(line)
		switch {
		case cur == nil && m != nil:
			switch m[1] {
			case "sh", "ts", "text", "json":
			default:
				t.Fatalf("%s:%d: a code block of language %q: mark it sh or ts (run by this test) or text or json (not run)", file, i+1, m[1])
			}
			cur = &guideBlock{lang: m[1], line: i + 1}
		case cur != nil && m != nil && m[1] == "":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.code += line + "\n"
		}
	}
	if cur != nil {
		t.Fatalf("%s:%d: an unclosed code block", file, cur.line)
	}
	return out
}

// TestGuides runs every sh and ts block of every guide against a real
// platform, so the guides cannot rot: per guide, its sh blocks in order in
// one bash (variables carry over, as in one terminal, with -euo pipefail),
// then each ts block, compiled with `tsc --strict` against the packed SDK
// and run with Node. The guides' base URL (`make run`'s) becomes the test
// platform's, and `bin/platform` its binary.
func TestGuides(t *testing.T) {
	t.Parallel() // a long test: see "Parallel tests" in main_test.go
	p := shared(t)
	files, err := filepath.Glob(filepath.Join(guidesDir, "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no guides in %s: %v", guidesDir, err)
	}
	blocks := map[string][]guideBlock{}
	var ts []string
	for _, f := range files {
		slug := strings.TrimSuffix(filepath.Base(f), ".md")
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		blocks[slug] = guideBlocks(t, f, raw)
		for i, b := range blocks[slug] {
			if b.lang == "ts" {
				ts = append(ts, fmt.Sprintf("%s-%d", slug, i))
			}
		}
	}
	// The README's "Getting started" section is run the same way.
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	section, ok := markdownSection(string(readme), "## Getting started")
	if !ok {
		t.Fatal("README.md has no \"## Getting started\" section")
	}
	blocks[readmeGuide] = guideBlocks(t, "README.md", []byte(section))
	files = append(files, readmeGuide+".md")
	// So is the SDK README's TypeScript.
	sdkReadme, err := os.ReadFile(filepath.Join(sdkDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks[sdkReadmeGuide] = guideBlocks(t, "sdk/typescript/README.md", sdkReadme)
	for i, b := range blocks[sdkReadmeGuide] {
		if b.lang == "ts" {
			ts = append(ts, fmt.Sprintf("%s-%d", sdkReadmeGuide, i))
		}
	}
	files = append(files, sdkReadmeGuide+".md")
	if len(blocks["01-getting-started"]) == 0 || len(blocks[readmeGuide]) == 0 {
		t.Fatal("the getting-started guide has no blocks")
	}
	// The fiat admin of the event-stream guide is the harness's.
	if !strings.Contains(fmt.Sprint(blocks["08-event-stream"]), harness.FiatAdminEmail) {
		t.Fatalf("the event-stream guide does not use the admin %s", harness.FiatAdminEmail)
	}

	app := sdkUserProject(t, "guides", "package.json")
	for slug, bs := range blocks {
		for i, b := range bs {
			if b.lang == "ts" {
				src := strings.ReplaceAll(b.code, guideBaseURL, p.BaseURL)
				if err := os.WriteFile(filepath.Join(app, fmt.Sprintf("%s-%d.ts", slug, i)), []byte(src), 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	tsconfig := `{"compilerOptions": {"target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext",
 "lib": ["ES2022", "DOM"], "strict": true, "noUncheckedIndexedAccess": true, "outDir": "dist", "rootDir": "."}, "include": ["*.ts"]}`
	if err := os.WriteFile(filepath.Join(app, "tsconfig.json"), []byte(tsconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	if len(ts) > 0 {
		sdkCompile(t, app)
	}

	bin := harness.Binary(t)
	for _, f := range files {
		slug := strings.TrimSuffix(filepath.Base(f), ".md")
		t.Run(slug, func(t *testing.T) {
			var script strings.Builder
			script.WriteString("set -euo pipefail\n")
			for _, b := range blocks[slug] {
				if b.lang != "sh" {
					continue
				}
				fmt.Fprintf(&script, "echo '--- %s.md:%d' >&2\n", slug, b.line)
				code := strings.ReplaceAll(b.code, guideBaseURL, p.BaseURL)
				code = regexp.MustCompile(`(?m)(^|[\s;&|(])bin/platform `).ReplaceAllString(code, "${1}"+bin+" ")
				script.WriteString(code)
			}
			if script.Len() > len("set -euo pipefail\n") {
				out := guideRun(t, t.TempDir(), p.Env, "bash", "-c", script.String())
				t.Logf("%s sh:\n%s", slug, out)
			}
			for i, b := range blocks[slug] {
				if b.lang != "ts" {
					continue
				}
				out := guideRun(t, app, nil, "node", filepath.Join("dist", fmt.Sprintf("%s-%d.js", slug, i)))
				t.Logf("%s.md:%d ts:\n%s", slug, b.line, out)
			}
		})
	}
}

// readmeGuide names the README's getting-started section among the guides.
const readmeGuide = "README-getting-started"

// sdkReadmeGuide names the SDK's README among the guides.
const sdkReadmeGuide = "sdk-README"

// markdownSection is the text of the section that starts with the heading
// line, up to the next heading of the same level.
func markdownSection(text, heading string) (string, bool) {
	i := strings.Index(text, "\n"+heading+"\n")
	if i < 0 {
		return "", false
	}
	rest := text[i+1:]
	level := heading[:strings.Index(heading, " ")+1]
	if j := strings.Index(rest[len(heading):], "\n"+level); j >= 0 {
		rest = rest[:len(heading)+j+1]
	}
	return rest, true
}

// guideRun runs one guide's commands with a bound on their time and fails
// the test with their output when they exit non-zero.
func guideRun(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out.String())
	}
	return out.String()
}
