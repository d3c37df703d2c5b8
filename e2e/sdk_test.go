package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sdkDir is the TypeScript SDK's package, from this package's directory.
const sdkDir = "../sdk/typescript"

// sdkTool finds node or npm; without them the test fails (`make test`
// machines have Node 20).
func sdkTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("the SDK test needs %s (Node.js 20 and npm): %v", name, err)
	}
	return p
}

// sdkRun runs a command in the SDK's directory and fails the test with its
// output when it fails.
func sdkRun(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(sdkTool(t, name), args...)
	cmd.Dir = sdkDir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	t.Logf("%s %s: %s", name, strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return out.String()
}

// TestSDK checks the committed TypeScript SDK: its generated types match the
// document the binary serves, and a test compiled with `tsc --strict` drives
// register → deposit (signed processor webhook) → transfer → history through
// it against the real platform.
func TestSDK(t *testing.T) {
	p := shared(t)
	// npm ci installs exactly package-lock.json (from the npm cache when it
	// has the packages).
	sdkRun(t, nil, "npm", "ci", "--prefer-offline", "--no-audit", "--no-fund")

	t.Run("the index names the package", func(t *testing.T) {
		raw, err := os.ReadFile(filepath.Join(sdkDir, "package.json"))
		if err != nil {
			t.Fatal(err)
		}
		var pkg struct{ Name, Version string }
		if err := json.Unmarshal(raw, &pkg); err != nil || pkg.Name == "" || pkg.Version == "" {
			t.Fatalf("package.json without name and version (%v): %s", err, raw)
		}
		var idx struct {
			Platform struct {
				SDK struct {
					NPM []string `json:"npm"`
				} `json:"sdk"`
			} `json:"platform"`
		}
		p.Get(t, "/api/platform/openapi.json", "").Decode(t, &idx)
		if len(idx.Platform.SDK.NPM) != 1 || idx.Platform.SDK.NPM[0] != pkg.Name {
			t.Errorf("platform.sdk.npm = %v, want [%s]", idx.Platform.SDK.NPM, pkg.Name)
		}
	})

	t.Run("generated types are current", func(t *testing.T) {
		doc := p.Get(t, "/api/openapi.json", "")
		if doc.Status != 200 {
			t.Fatalf("/api/openapi.json: %d %.300s", doc.Status, doc.Body)
		}
		dir := t.TempDir()
		docFile := filepath.Join(dir, "openapi.json")
		if err := os.WriteFile(docFile, doc.Body, 0o600); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "generated")
		sdkRun(t, nil, "node", "scripts/generate.mjs", docFile, out)
		for _, f := range []string{"schema.ts", "operations.ts"} {
			fresh, err := os.ReadFile(filepath.Join(out, f))
			if err != nil {
				t.Fatal(err)
			}
			committed, err := os.ReadFile(filepath.Join(sdkDir, "src", "generated", f))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(fresh, committed) {
				t.Errorf("sdk/typescript/src/generated/%s is stale: run `make sdk` and commit it; %s", f, firstDifference(fresh, committed))
			}
		}
	})

	t.Run("register deposit transfer history", func(t *testing.T) {
		sdkRun(t, nil, "npx", "--no-install", "tsc", "--strict", "-p", "tsconfig.json")
		out := sdkRun(t, []string{"PLATFORM_URL=" + p.BaseURL, "PROCESSOR_WEBHOOK_SECRET=" + fiatSecret(t, p)},
			"node", "dist/test/flow.test.js")
		for _, want := range []string{"ok retries503", "ok flow"} {
			if !strings.Contains(out, want) {
				t.Errorf("the TypeScript test did not report %q:\n%s", want, out)
			}
		}
	})
}

// firstDifference describes the first line where the generated and the
// committed file differ.
func firstDifference(fresh, committed []byte) string {
	a, b := strings.Split(string(fresh), "\n"), strings.Split(string(committed), "\n")
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y || i >= len(a) || i >= len(b) {
			return fmt.Sprintf("line %d: generated %q, committed %q", i+1, x, y)
		}
	}
	return "same lines"
}
