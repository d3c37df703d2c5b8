package broker

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestListensOnLoopbackOnly: the embedded broker has no authentication, so
// it refuses any listen address but a loopback one, and Start binds there.
func TestListensOnLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":0", "192.0.2.1:9092", "localhost:0"} {
		if err := loopbackOnly(addr); err == nil || !strings.Contains(err.Error(), "loopback only") {
			t.Errorf("%s: %v, want a refusal", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		if err := loopbackOnly(addr); err != nil {
			t.Errorf("%s refused: %v", addr, err)
		}
	}
	e, err := Start(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, a := range e.Addrs() {
		ap, err := netip.ParseAddrPort(a)
		if err != nil || !ap.Addr().IsLoopback() {
			t.Fatalf("the broker listens on %s", a)
		}
	}
}

// TestSegmentsOnlyForTheOwner: the broker's data directory, which holds
// every command and event, is entered by its owner only, also when it
// existed before with a wider mode.
func TestSegmentsOnlyForTheOwner(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "kafka"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := Start(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	fi, err := os.Stat(filepath.Join(dir, "kafka"))
	if err != nil {
		t.Fatal(err)
	}
	if mode := fi.Mode().Perm(); mode != 0o700 {
		t.Fatalf("the broker's data directory has mode %o, want 700", mode)
	}
}
