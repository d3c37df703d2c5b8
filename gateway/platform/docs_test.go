package platform

import (
	"bytes"
	"compress/gzip"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
)

func docsServer(t *testing.T) *server.Server {
	t.Helper()
	s := server.New(ratelimit.New(ratelimit.Limits{}, time.Now), prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	registerDocs(s.Root())
	return s
}

func TestDocsPage(t *testing.T) {
	t.Parallel()
	s := docsServer(t)
	resp, err := s.App.Test(httptest.NewRequest(http.MethodGet, "/docs", nil))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("/docs: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	csp := resp.Header.Get("Content-Security-Policy")
	m := regexp.MustCompile(`script-src 'nonce-([A-Za-z0-9_-]+)'`).FindStringSubmatch(csp)
	if m == nil {
		t.Fatalf("CSP without a script nonce: %s", csp)
	}
	nonce := m[1]
	// Both scripts (the vendored bundle and the bootstrap) carry the nonce,
	// and the bundle comes from this origin.
	if got := strings.Count(string(body), `<script nonce="`+nonce+`"`); got != 2 {
		t.Errorf("%d scripts carry the nonce, want 2:\n%s", got, body)
	}
	if !strings.Contains(string(body), `src="`+redocPath+`"`) || !strings.Contains(string(body), `"`+CompletePath+`"`) {
		t.Errorf("page does not load the vendored bundle and the document:\n%s", body)
	}
	for _, want := range []string{"worker-src blob:", "connect-src 'self'", "img-src 'self' data:", "'sha256-" + redocStyleHashes[1] + "'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP lacks %q: %s", want, csp)
		}
	}
}

func TestDocsAsset(t *testing.T) {
	t.Parallel()
	if !bytes.Contains(redocJS, []byte(`"`+RedocVersion+`"`)) {
		t.Fatalf("the vendored bundle is not Redoc %s", RedocVersion)
	}
	if bytes.Count(redocJS, []byte(redocCDNLogo)) != 1 || bytes.Contains(redocServed, []byte("cdn.redoc.ly")) {
		t.Fatal("the served bundle still loads the logo from the CDN")
	}
	s := docsServer(t)
	for _, gz := range []bool{false, true} {
		req := httptest.NewRequest(http.MethodGet, redocPath, nil)
		if gz {
			req.Header.Set("Accept-Encoding", "gzip, deflate")
		}
		resp, err := s.App.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		var r io.Reader = resp.Body
		if gz {
			if resp.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("gzip not used: %v", resp.Header)
			}
			if r, err = gzip.NewReader(resp.Body); err != nil {
				t.Fatal(err)
			}
		}
		got, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || !bytes.Equal(got, redocServed) {
			t.Fatalf("gzip=%v: %d, %d bytes, want the bundle (%d bytes)", gz, resp.StatusCode, len(got), len(redocServed))
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") || !strings.Contains(resp.Header.Get("Cache-Control"), "immutable") {
			t.Errorf("headers: %v", resp.Header)
		}
	}
}
