package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// makeIn runs make at the repository root with args and extra environment,
// and returns its combined output and error.
func makeIn(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make is needed: %v", err)
	}
	cmd := exec.Command("make", append([]string{"-s", "-C", ".."}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestMakeBuildNamesAColdCache: `make build` (and so `make run`) says the
// first build takes minutes when the Go build cache is cold — absent or
// nearly empty — and says nothing when it is warm, whether or not
// bin/platform exists. A stand-in `go` answers `go env GOCACHE` and builds
// nothing, so the test compiles nothing.
func TestMakeBuildNamesAColdCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fakeGo := filepath.Join(dir, "go")
	script := "#!/bin/sh\nif [ \"$1\" = env ]; then echo \"$FAKE_GOCACHE\"; fi\nexit 0\n"
	if err := os.WriteFile(fakeGo, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	warm := filepath.Join(dir, "warm")
	for i := 0; i < 50; i++ {
		sub := filepath.Join(warm, fmt.Sprintf("%02x", i))
		if err := os.MkdirAll(sub, 0o700); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 50; j++ {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("%d-a", j)), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	nearlyEmpty := filepath.Join(dir, "empty")
	if err := os.MkdirAll(filepath.Join(nearlyEmpty, "00"), 0o700); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "platform") // absent: the message must not key on it
	for _, c := range []struct {
		cache string
		cold  bool
	}{
		{filepath.Join(dir, "absent"), true},
		{nearlyEmpty, true},
		{"off", true},
		{warm, false},
	} {
		out, err := makeIn(t, []string{"FAKE_GOCACHE=" + c.cache}, "build", "GO="+fakeGo, "BIN="+bin)
		if err != nil {
			t.Fatalf("make build with cache %s: %v\n%s", c.cache, err, out)
		}
		said := strings.Contains(out, "cold Go build cache") && strings.Contains(out, "takes a few minutes")
		if said != c.cold {
			t.Errorf("make build with cache %s (cold %v) printed:\n%s", c.cache, c.cold, out)
		}
	}
}

// TestMakeStatusOfAStoppedStack: `make status` of a stack that is not
// running says so and how to start it, and make exits 0 (no "Error 1").
// Its DATA_DIR and ports are the test's own, so the shared stack is not
// looked at.
func TestMakeStatusOfAStoppedStack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, err := makeIn(t, nil, "status", "DATA_DIR="+dir, "PG_PORT=56147", "CH_PORT=56148", "CH_HTTP_PORT=56149")
	if err != nil || strings.Contains(out, "Error") {
		t.Fatalf("make status of a stopped stack: %v\n%s", err, out)
	}
	for _, want := range []string{"postgres:   stopped", "make stack starts it"} {
		if !strings.Contains(out, want) {
			t.Errorf("make status lacks %q:\n%s", want, out)
		}
	}
}
