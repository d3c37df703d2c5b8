package server_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fintech/platform/gateway/clientip"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
)

// TestRateLimitsChargeTheClientBehindTrustedProxies: the per-IP limits
// charge the client address that clientip resolves. fiber's test
// connection comes from 0.0.0.0, which plays the proxy when trusted.
func TestRateLimitsChargeTheClientBehindTrustedProxies(t *testing.T) {
	type req struct {
		xff  []string
		want int
	}
	tests := []struct {
		name    string
		trusted string
		reqs    []req
	}{
		{"a forged X-Forwarded-For from an untrusted peer is ignored", "10.0.0.0/8", []req{
			{[]string{"203.0.113.1"}, 200}, {[]string{"203.0.113.2"}, 429}, {nil, 429}}},
		{"no trusted proxies: the peer is the client", "", []req{
			{[]string{"203.0.113.1"}, 200}, {[]string{"203.0.113.2"}, 429}}},
		{"through a trusted proxy two clients get separate budgets", "0.0.0.0/32", []req{
			{[]string{"203.0.113.1"}, 200}, {[]string{"203.0.113.2"}, 200}, {[]string{"203.0.113.1"}, 429}}},
		{"what a client prepends to the chain is not believed", "0.0.0.0/32, 10.0.0.0/8", []req{
			{[]string{"198.51.100.9, 203.0.113.1, 10.1.2.3"}, 200},
			{[]string{"198.51.100.8, 203.0.113.1", "10.9.9.9"}, 429},
			{[]string{"203.0.113.2, 10.1.2.3"}, 200}}},
		// compose behind the TLS proxy it recommends: HAProxy (the peer)
		// appends the TLS proxy's hop after the client's address.
		{"TLS proxy and HAProxy both named: each client its own budget", "0.0.0.0/32, 172.30.0.1/32", []req{
			{[]string{"203.0.113.1, 172.30.0.1"}, 200}, {[]string{"203.0.113.2, 172.30.0.1"}, 200}, {[]string{"203.0.113.1, 172.30.0.1"}, 429}}},
		{"only HAProxy named: the TLS proxy's hop is every client", "0.0.0.0/32", []req{
			{[]string{"203.0.113.1, 172.30.0.1"}, 200}, {[]string{"203.0.113.2, 172.30.0.1"}, 429}}},
		{"two IPv6 addresses in one /64 share a budget", "0.0.0.0/32", []req{
			{[]string{"2001:db8:1:2::1"}, 200}, {[]string{"2001:db8:1:2:ffff::7"}, 429}, {[]string{"2001:db8:1:3::1"}, 200}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := server.New(ratelimit.New(ratelimit.Limits{Read: 1}, time.Now), prometheus.NewRegistry(),
				slog.New(slog.NewTextHandler(io.Discard, nil)))
			trusted, err := clientip.ParseTrusted(tt.trusted)
			if err != nil {
				t.Fatal(err)
			}
			s.TrustProxies(trusted)
			s.Root().Get("/t", "test", func(c *fiber.Ctx) error { return c.SendString(clientip.String(c)) })
			s.Finish()
			for i, r := range tt.reqs {
				hr := httptest.NewRequest(http.MethodGet, "/t", nil)
				for _, v := range r.xff {
					hr.Header.Add(clientip.HeaderForwardedFor, v)
				}
				resp, err := s.App.Test(hr)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != r.want {
					t.Fatalf("request %d (X-Forwarded-For %q): %d %s, want %d", i, r.xff, resp.StatusCode, body, r.want)
				}
			}
		})
	}
}

// TestResolve: the walk from the right, without a server.
func TestResolve(t *testing.T) {
	t.Parallel()
	trusted, err := clientip.ParseTrusted("10.0.0.0/8, 192.0.2.1, ::1")
	if err != nil {
		t.Fatal(err)
	}
	r := clientip.New(trusted)
	tests := []struct {
		peer string
		xff  []string
		want string
	}{
		{"203.0.113.5", []string{"1.2.3.4"}, "203.0.113.5"},
		{"192.0.2.1", nil, "192.0.2.1"},
		{"192.0.2.1", []string{"203.0.113.7"}, "203.0.113.7"},
		{"192.0.2.1", []string{"1.1.1.1, 203.0.113.7, 10.0.0.2"}, "203.0.113.7"},
		{"::1", []string{"2001:db8::5"}, "2001:db8::5"},
		{"::ffff:192.0.2.1", []string{"203.0.113.7:5123"}, "203.0.113.7"},
		{"192.0.2.1", []string{"[2001:db8::9]:443"}, "2001:db8::9"},
		{"192.0.2.1", []string{"junk, 10.0.0.3"}, "10.0.0.3"},
		{"192.0.2.1", []string{"10.0.0.3, 10.0.0.4"}, "10.0.0.3"},
	}
	for _, tt := range tests {
		got := r.Resolve(netip.MustParseAddr(tt.peer), tt.xff)
		if got.String() != tt.want {
			t.Errorf("Resolve(%s, %q) = %s, want %s", tt.peer, tt.xff, got, tt.want)
		}
	}
	if k := clientip.KeyOf(netip.MustParseAddr("2001:db8:a:b:c:d:e:f")); k != "2001:db8:a:b::/64" {
		t.Errorf("IPv6 key %s, want its /64", k)
	}
	if k := clientip.KeyOf(netip.MustParseAddr("203.0.113.7")); k != "203.0.113.7" {
		t.Errorf("IPv4 key %s", k)
	}
	if _, err := clientip.ParseTrusted("10.0.0.0/8, nonsense"); err == nil {
		t.Error("a bad TRUSTED_PROXIES entry was accepted")
	}
}
