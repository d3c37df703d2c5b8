package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

// sdkDir is the TypeScript SDK's package, from this package's directory.
const sdkDir = "../sdk/typescript"

// sdkRun runs a command in the SDK's directory and fails the test with its
// output when it fails.
func sdkRun(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	return runIn(t, sdkDir, env, name, args...)
}

// TestSDK checks the committed TypeScript SDK: its generated types match the
// document the binary serves, its unit tests pass, and a user's program
// over the packed tarball, compiled with `tsc --strict`, uses every helper
// against the real platform.
func TestSDK(t *testing.T) {
	t.Parallel() // a long test: see "Parallel tests" in main_test.go
	p := shared(t)
	sdkUserProject(t, "sdkapp") // npm ci, pack and install, once per process

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
		doc := p.Get(t, "/api/platform/openapi.full.json", "")
		if doc.Status != 200 {
			t.Fatalf("/api/platform/openapi.full.json: %d %.300s", doc.Status, doc.Body)
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

	t.Run("unit tests", func(t *testing.T) {
		out := sdkRun(t, nil, "npm", "test")
		if !strings.Contains(out, "ok unit") {
			t.Errorf("the SDK's unit tests did not report ok:\n%s", out)
		}
	})

	t.Run("npm install of the directory", func(t *testing.T) {
		// npm links the directory and runs its prepare script, which
		// builds dist/; the project then imports every helper.
		sdkAbs, err := filepath.Abs(sdkDir)
		if err != nil {
			t.Fatal(err)
		}
		app := t.TempDir()
		runIn(t, app, nil, "npm", "install", "--prefer-offline", "--no-audit", "--no-fund", sdkAbs)
		script := `import * as sdk from "@fintech-platform/sdk";
for (const name of ["createClient", "paginate", "verifyWebhook", "streamEvents", "PlatformError"]) {
  if (typeof sdk[name] !== "function") throw new Error(name + " is not exported");
}
console.log("ok imports");`
		if err := os.WriteFile(filepath.Join(app, "check.mjs"), []byte(script), 0o600); err != nil {
			t.Fatal(err)
		}
		if out := runIn(t, app, nil, "node", "check.mjs"); !strings.Contains(out, "ok imports") {
			t.Errorf("the linked package: %s", out)
		}
	})

	t.Run("a user's strict program over the packed tarball", func(t *testing.T) {
		admin := p.RegisterEmail(t, harness.FiatAdminEmail)
		verified := p.Register(t, "sdk-verified")
		p.VerifyEmail(t, verified)
		app := sdkUserProject(t, "sdkapp", "main.ts", "tsconfig.json", "package.json")
		// The SDK's own TypeScript compiler and Node types (npm ci above)
		// compile the program: the project holds only the tarball.
		sdkCompile(t, app)
		out := runIn(t, app, []string{"PLATFORM_URL=" + p.BaseURL, "FIAT_ADMIN_TOKEN=" + admin.Token, "VERIFIED_TOKEN=" + verified.Token}, "node", "dist/main.js")
		for _, want := range []string{"ok transfer", "ok errors", "ok paginate 250", "ok webhook verified",
			"ok sse three events across a drop", "ok sse resume", "ok modules", "ok all"} {
			if !strings.Contains(out, want) {
				t.Errorf("the program did not report %q:\n%s", want, out)
			}
		}
	})
}

// sdkPacked is the SDK as a user installs it, once per test process: npm
// ci in sdk/typescript, `npm pack` (its prepack builds dist/), and the
// tarball installed into an empty project.
var sdkPacked struct {
	once sync.Once
	dir  string
	err  error
}

// sdkUserProject returns a new directory inside the project holding the
// installed tarball, with the given files of e2e/testdata/sdkapp: what a
// user has after `npm install <tarball>`.
func sdkUserProject(t *testing.T, sub string, files ...string) string {
	t.Helper()
	sdkPacked.once.Do(func() { sdkPacked.dir, sdkPacked.err = packAndInstall() })
	if sdkPacked.err != nil {
		t.Fatal(sdkPacked.err)
	}
	app := filepath.Join(sdkPacked.dir, sub)
	if err := os.MkdirAll(app, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join("testdata", "sdkapp", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(app, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return app
}

func packAndInstall() (string, error) {
	// npm ci installs exactly package-lock.json (from the npm cache when it
	// has the packages); npm pack builds.
	if _, err := runCmd(sdkDir, nil, "npm", "ci", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund"); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "sdk-user-")
	if err != nil {
		return "", err
	}
	processCleanups = append(processCleanups, func() { os.RemoveAll(dir) })
	out, err := runCmd(sdkDir, nil, "npm", "pack", "--json", "--pack-destination", dir)
	if err != nil {
		return "", err
	}
	var packed []struct {
		Filename string `json:"filename"`
		Files    []struct {
			Path string `json:"path"`
		} `json:"files"`
	}
	if i := strings.Index(out, "["); i < 0 || json.Unmarshal([]byte(out[i:]), &packed) != nil || len(packed) != 1 {
		return "", fmt.Errorf("npm pack --json: %s", out)
	}
	var hasDist bool
	for _, f := range packed[0].Files {
		hasDist = hasDist || f.Path == "dist/index.js"
	}
	if !hasDist {
		return "", fmt.Errorf("the tarball has no dist/index.js: %+v", packed[0].Files)
	}
	_, err = runCmd(dir, nil, "npm", "install", "--prefer-offline", "--no-audit", "--no-fund", filepath.Join(dir, packed[0].Filename))
	return dir, err
}

// sdkCompile compiles the project in dir with `tsc --strict`, using the
// SDK's own TypeScript compiler and Node types (its npm ci), so the project
// holds nothing but what a user installs.
func sdkCompile(t *testing.T, dir string) {
	t.Helper()
	sdkAbs, err := filepath.Abs(sdkDir)
	if err != nil {
		t.Fatal(err)
	}
	tsc := filepath.Join(sdkAbs, "node_modules", "typescript", "bin", "tsc")
	runIn(t, dir, nil, "node", tsc, "--strict", "-p", "tsconfig.json",
		"--typeRoots", filepath.Join(sdkAbs, "node_modules", "@types"), "--types", "node")
}

// runIn runs a command in dir and fails the test with its output when it
// fails.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	start := time.Now()
	out, err := runCmd(dir, env, name, args...)
	t.Logf("%s %s: %s", name, strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// runCmd runs a command in dir; its error carries the output.
func runCmd(dir string, env []string, name string, args ...string) (string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s is needed (Node.js 20 and npm): %w", name, err)
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
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
