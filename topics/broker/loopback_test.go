package broker

import (
	"net/netip"
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
