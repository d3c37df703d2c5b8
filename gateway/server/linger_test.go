package server_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
)

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func waitListening(t *testing.T, addr string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
	}
	t.Fatalf("nothing listens on %s", addr)
}

// TestBodyOverLimitIs400WhileStillSent: a body over 1 MiB is answered 400
// payload_too_large — every time, not "connection reset" — when the client
// sends it whole (the server answers on the Content-Length, then reads and
// discards the rest before it closes) and when it only announces it, both
// straight to the gateway and through HAProxy (when installed: the
// cluster's proxy, which before 3.0 does not drain a request the server
// answered early).
func TestBodyOverLimitIs400WhileStillSent(t *testing.T) {
	s := server.New(ratelimit.New(ratelimit.Limits{}, time.Now), prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	s.Root().Post("/api/echo", ratelimit.Write, "echo", func(c *fiber.Ctx) error { return c.SendString("ok") })
	s.Finish()
	gw := freeAddr(t)
	go func() { _ = s.Listen(gw) }()
	t.Cleanup(func() { _ = s.App.Shutdown() })
	waitListening(t, gw)
	targets := map[string]string{"gateway": gw}
	if _, err := exec.LookPath("haproxy"); err == nil {
		targets["haproxy"] = startHAProxy(t, gw)
	} else {
		t.Log("haproxy is not installed: the gateway alone")
	}
	client := &http.Client{Timeout: 20 * time.Second}
	for name, addr := range targets {
		bad := 0
		for _, size := range []int{server.BodyLimit + 1, 2 << 20, 8 << 20} {
			for i := 0; i < 10; i++ {
				resp, err := client.Post("http://"+addr+"/api/echo", "application/json", bytes.NewReader(bytes.Repeat([]byte(" "), size)))
				if err != nil {
					bad++
					t.Errorf("%s: a body of %d bytes: %v", name, size, err)
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `"payload_too_large"`) {
					bad++
					t.Errorf("%s: a body of %d bytes: %d %s", name, size, resp.StatusCode, b)
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of 30 bodies over 1 MiB not answered 400 payload_too_large", name, bad)
		}
		// Announced, not sent: refused on the Content-Length alone.
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(conn, "POST /api/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", 2<<20)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s: announced body: %v", name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		conn.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `"payload_too_large"`) {
			t.Errorf("%s: announced body: %d %s", name, resp.StatusCode, b)
		}
	}
}

// startHAProxy runs HAProxy in front of backend as deploy/local/cluster.sh
// configures it, and returns its address.
func startHAProxy(t *testing.T, backend string) string {
	t.Helper()
	dir := t.TempDir()
	addr := freeAddr(t)
	cfg := fmt.Sprintf(`global
    maxconn 256
defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    retries 2
    option redispatch 1
    retry-on conn-failure
frontend api
    bind %s
    option forwardfor
    default_backend gateways
backend gateways
    server gw1 %s
`, addr, backend)
	path := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("haproxy", "-db", "-f", path)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitListening(t, addr)
	return addr
}
