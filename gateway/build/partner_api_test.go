package build

import (
	"crypto/rand"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/clientip"
	"github.com/fintech/platform/gateway/ratelimit"
)

func TestNewKeyFormat(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		k, _, err := auth.PartnerKeys.Mint(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if !auth.PartnerKeys.WellFormed(k) || len(k) != len("qb_pk_")+43 || seen[k] {
			t.Fatalf("key %q", k)
		}
		seen[k] = true
	}
	for _, bad := range []string{"", "qb_pk_", "qb_pk_short", "QB_PK_" + strings.Repeat("a", 22), "qb_pk_" + strings.Repeat("a", 21),
		"qb_pk_" + strings.Repeat("a", 22) + "!", "qb_pk_" + strings.Repeat("a", 123), " qb_pk_" + strings.Repeat("a", 22)} {
		if auth.PartnerKeys.WellFormed(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestRateKey(t *testing.T) {
	t.Parallel()
	app := fiber.New()
	key := "qb_pk_" + strings.Repeat("k", 30)
	tests := []struct {
		name, path, header string
		byKey              bool
	}{
		{"partner api with key", APIPrefix + "/vacancies", key, true},
		{"partner api without key", APIPrefix + "/vacancies", "", false},
		{"partner api malformed key", APIPrefix + "/vacancies", "junk", false},
		{"other partner-class route ignores the header", "/api/fiat/deposit/webhook", key, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rc fasthttp.RequestCtx
			rc.Request.SetRequestURI(tt.path)
			if tt.header != "" {
				rc.Request.Header.Set(HeaderKey, tt.header)
			}
			c := app.AcquireCtx(&rc)
			defer app.ReleaseCtx(c)
			got := RateKey(c)
			if strings.HasPrefix(got, "build-key:") != tt.byKey || strings.Contains(got, key) {
				t.Fatalf("RateKey = %q", got)
			}
		})
	}
}

// TestRateKeyPerAddress: one address spending a public key's budget leaves
// the key's budget at another address whole (the widget of a partner is not
// blanked for everyone by one client).
func TestRateKeyPerAddress(t *testing.T) {
	t.Parallel()
	app := fiber.New()
	key := "qb_pk_" + strings.Repeat("w", 30)
	rateKey := func(ip string) string {
		var rc fasthttp.RequestCtx
		rc.Init(&fasthttp.Request{}, &net.TCPAddr{IP: net.ParseIP(ip), Port: 4000}, nil)
		rc.Request.SetRequestURI(APIPrefix + "/vacancies")
		rc.Request.Header.Set(HeaderKey, key)
		c := app.AcquireCtx(&rc)
		defer app.ReleaseCtx(c)
		return RateKey(c)
	}
	lim := ratelimit.New(ratelimit.Limits{Partner: 3}, time.Now)
	for i := 0; i < 3; i++ {
		if ok, _, _, _ := lim.Take(ratelimit.Partner, rateKey("192.0.2.1")); !ok {
			t.Fatalf("request %d refused within the budget", i+1)
		}
	}
	if ok, _, _, _ := lim.Take(ratelimit.Partner, rateKey("192.0.2.1")); ok {
		t.Fatal("the spending address got a 4th request of 3")
	}
	if ok, _, _, _ := lim.Take(ratelimit.Partner, rateKey("198.51.100.7")); !ok {
		t.Fatal("another address was refused: one client drained the key for everyone")
	}
}

func TestPartnerListParams(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, &fakeStore{}, Config{})
	// Without a valid key every list answers 401 before parameters are read.
	if status, _, h := get(t, srv, APIPrefix+"/vacancies?limit=abc", map[string]string{"Origin": "https://a.example"}); status != http.StatusUnauthorized ||
		h["Access-Control-Allow-Origin"][0] != "*" {
		t.Fatalf("no key: %d %v", status, h)
	}
	tests := []struct {
		query         string
		limit, offset int
		ok            bool
	}{
		{"", 50, 0, true},
		{"limit=1&offset=3", 1, 3, true},
		{"limit=200", 200, 0, true},
		{"limit=201", 200, 0, true},
		{"limit=99999999999999999999999", 200, 0, true},
		{"limit=0", 0, 0, false},
		{"limit=-3", 0, 0, false},
		{"limit=1e3", 0, 0, false},
		{"offset=-1", 0, 0, false},
		{"offset=1000", 50, 1000, true},
		{"offset=1001", 0, 0, false},
		{"offset=1.0", 0, 0, false},
	}
	app := fiber.New()
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			var rc fasthttp.RequestCtx
			rc.Request.SetRequestURI("/x?" + tt.query)
			c := app.AcquireCtx(&rc)
			defer app.ReleaseCtx(c)
			var p offsetPaging
			err := bind.Request(c, &p)
			if err == nil {
				err = p.Validate()
			}
			limit, offset := p.limit, p.offset
			if (err == nil) != tt.ok || (tt.ok && (limit != tt.limit || offset != tt.offset)) {
				t.Fatalf("got %d %d %v", limit, offset, err)
			}
		})
	}
}

func TestPreflight(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, &fakeStore{}, Config{})
	req, _ := http.NewRequest(http.MethodOptions, APIPrefix+"/vacancies/abc", nil)
	req.Header.Set("Origin", "https://partner.example")
	req.Header.Set("Access-Control-Request-Method", "GET")
	req.Header.Set("Access-Control-Request-Headers", "X-Build-Key")
	resp, err := srv.App.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "X-Build-Key") ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "GET") {
		t.Fatalf("preflight %d %v", resp.StatusCode, resp.Header)
	}
}

// TestRateKeyPerClientBehindProxy: behind a trusted proxy (every request's
// peer is the proxy) a partner key's budget is per client, read from
// X-Forwarded-For: one client spending it leaves another client's whole,
// and a client cannot pick a fresh budget by forging the header (the
// proxy appends the address it saw).
func TestRateKeyPerClientBehindProxy(t *testing.T) {
	t.Parallel()
	// fiber's app.Test connects from 0.0.0.0: that is the proxy here.
	trusted, err := clientip.ParseTrusted("0.0.0.0/32")
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New()
	app.Use(clientip.New(trusted).Handler())
	app.Get(APIPrefix+"/vacancies", func(c *fiber.Ctx) error { return c.SendString(RateKey(c)) })
	key := "qb_pk_" + strings.Repeat("p", 30)
	rateKey := func(forwarded string) string {
		req := httptest.NewRequest(http.MethodGet, APIPrefix+"/vacancies", nil)
		req.Header.Set(HeaderKey, key)
		req.Header.Set(clientip.HeaderForwardedFor, forwarded)
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	lim := ratelimit.New(ratelimit.Limits{Partner: 3}, time.Now)
	for i := range 3 {
		if ok, _, _, _ := lim.Take(ratelimit.Partner, rateKey("192.0.2.1")); !ok {
			t.Fatalf("request %d refused within the budget", i+1)
		}
	}
	if ok, _, _, _ := lim.Take(ratelimit.Partner, rateKey("198.51.100.9, 192.0.2.1")); ok {
		t.Fatal("a forged X-Forwarded-For bought the spending client a fresh budget")
	}
	if ok, _, _, _ := lim.Take(ratelimit.Partner, rateKey("198.51.100.7")); !ok {
		t.Fatal("another client behind the proxy was refused: one client drained the key for everyone behind it")
	}
}
