package e2e

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fintech/platform/e2e/harness"
)

// productionRequired is every setting production mode refuses to start
// without.
var productionRequired = []string{"DATABASE_URL", "CLICKHOUSE_ADDR", "PUBLIC_BASE_URL", "PROCESSOR_API_KEY", "SMTP_URL",
	"JWT_SECRET", "LEDGER_SALT", "PROCESSOR_WEBHOOK_SECRET", "SIGNING_MASTER_KEY", "DATA_ENCRYPTION_KEY"}

// runConfigFailure runs `platform run` with exactly env and returns its
// output lines; it fails the test unless the process exits with status 2.
func runConfigFailure(t *testing.T, env []string) []string {
	t.Helper()
	cmd := exec.Command(harness.Binary(t), "run")
	cmd.Env = env
	if cmd.Env == nil {
		cmd.Env = []string{} // nil would inherit the test's environment
	}
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("exit %v, output %q: want exit status 2", err, out)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// TestProductionIsTheDefault: the binary runs in production mode unless
// PLATFORM_ENV=development is set. With nothing set it refuses to start and
// names every missing setting, one line each; with only what production
// needs it serves no test processor, approves no KYC at once and mails
// links instead of logging them; development conveniences are refused.
func TestProductionIsTheDefault(t *testing.T) {
	t.Run("an empty environment names every missing setting", func(t *testing.T) {
		lines := runConfigFailure(t, nil)
		named := map[string]bool{}
		for _, l := range lines {
			rest, ok := strings.CutPrefix(l, "platform: configuration: ")
			name, _, _ := strings.Cut(rest, ":")
			if !ok || named[name] {
				t.Fatalf("line %q of %q: want one line per missing setting", l, lines)
			}
			named[name] = true
		}
		for _, name := range productionRequired {
			if !named[name] {
				t.Errorf("%s not named in %q", name, lines)
			}
		}
		if len(lines) != len(productionRequired) {
			t.Errorf("%d lines, want %d: %q", len(lines), len(productionRequired), lines)
		}
	})

	p := harness.Start(t, harness.Options{Production: true})
	t.Run("production settings only: no test processor, no KYC auto-approval", func(t *testing.T) {
		if v := p.Get(t, "/api/platform/version", "").JSON(t); v["environment"] != "production" || v["processor"] != "stripe" {
			t.Fatalf("version = %v, want environment production and the real processor", v)
		}
		for _, r := range []harness.Request{
			{Method: http.MethodGet, Path: "/api/fiat/checkout/cs_test_x"},
			{Method: http.MethodPost, Path: "/api/fiat/checkout/cs_test_x/pay"},
		} {
			if got := p.Do(t, r); got.Status != http.StatusNotFound {
				t.Fatalf("%s %s = %d %s, want 404", r.Method, r.Path, got.Status, got.Body)
			}
		}
		u := p.Register(t, "prod-kyc")
		k := p.Post(t, "/api/fiat/kyc/submit", u.Token, map[string]string{"fullName": "P K", "documentType": "passport",
			"documentNumber": "P-1", "country": "KZ"})
		if k.Status != http.StatusCreated || k.JSON(t)["status"] != "pending" {
			t.Fatalf("KYC submission in production: %d %s, want 201 pending", k.Status, k.Body)
		}
	})
	t.Run("production mails verification links, never logs them", func(t *testing.T) {
		u := p.Register(t, "prod-mail")
		// SMTP_URL names a port nobody listens on: the send fails loudly.
		r := p.Post(t, "/api/auth/verify-email", u.Token, map[string]any{})
		if r.Status != http.StatusBadGateway || r.JSON(t)["error"] != "mail_unavailable" {
			t.Fatalf("verify-email: %d %s, want 502 mail_unavailable", r.Status, r.Body)
		}
		if strings.Contains(p.Logs(), "verify-email?token=") {
			t.Fatalf("a verification link reached the log")
		}
		if _, err := os.Stat(filepath.Join(p.DataDir, "mail")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("DATA_DIR/mail exists in production (%v)", err)
		}
	})
	t.Run("production refuses development conveniences", func(t *testing.T) {
		for _, setting := range []string{"KYC_AUTO_APPROVE", "WEBHOOK_ALLOW_PRIVATE"} {
			lines := runConfigFailure(t, append(append([]string{}, p.Env...), setting+"=1"))
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "platform: configuration: "+setting+":") {
				t.Fatalf("%s=1: output %q, want one line naming it", setting, lines)
			}
		}
	})
}
