package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	// A binary that does not refuse would run (or wait for a database)
	// until killed.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, harness.Binary(t), "run")
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
	return refusalLines(out)
}

// refusalLines are a failed start's lines less the context every command
// prints around them: the database and broker it talks to, and where its
// settings came from (cmd/platform envfile.go).
func refusalLines(out []byte) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.HasPrefix(l, "platform: database ") || strings.HasPrefix(l, "platform: no env file was read") ||
			strings.HasPrefix(l, "platform: settings were read") {
			continue
		}
		lines = append(lines, l)
	}
	return lines
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
	t.Run("production refuses weak keys, one line naming each", func(t *testing.T) {
		for _, kv := range []string{"DATA_ENCRYPTION_KEY=abc", "SIGNING_MASTER_KEY=abc", "LEDGER_SALT=x",
			"PROCESSOR_WEBHOOK_SECRET=whsec_abc"} {
			name, _, _ := strings.Cut(kv, "=")
			lines := runConfigFailure(t, append(append([]string{}, p.Env...), kv))
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "platform: configuration: "+name+":") {
				t.Fatalf("%s: output %q, want one line naming it", kv, lines)
			}
		}
	})
	t.Run("production refuses keys the database was not first started with", func(t *testing.T) {
		for _, name := range []string{"DATA_ENCRYPTION_KEY", "SIGNING_MASTER_KEY", "LEDGER_SALT"} {
			raw := make([]byte, 32)
			if _, err := rand.Read(raw); err != nil {
				t.Fatal(err)
			}
			other := hex.EncodeToString(raw)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			cmd := exec.CommandContext(ctx, harness.Binary(t), "run")
			cmd.Env = append(append([]string{}, p.Env...), name+"="+other)
			cmd.Dir = t.TempDir()
			out, err := cmd.CombinedOutput()
			cancel()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Fatalf("%s changed: exit %v, output %q: want exit status 1", name, err, out)
			}
			var refusals []string
			for _, l := range refusalLines(out) {
				if strings.HasPrefix(l, "platform: ") {
					refusals = append(refusals, l)
				}
			}
			if len(refusals) != 1 || !strings.HasPrefix(refusals[0], "platform: "+name+": is not the key this database was first started with") ||
				strings.Contains(string(out), other) {
				t.Fatalf("%s changed: output %q, want one line naming it", name, out)
			}
		}
		// The platform itself, with its own keys, still serves.
		if r := p.Get(t, "/api/platform/version", ""); r.Status != http.StatusOK {
			t.Fatalf("version after the refusals: %d", r.Status)
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

// adminCmd runs `platform admin args...` against p's database with stdin.
func adminCmd(t *testing.T, p *harness.Platform, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(harness.Binary(t), append([]string{"admin"}, args...)...)
	cmd.Env = p.Env
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestAdminBootstrapCannotBeSquatted: `platform admin create` makes a
// verified admin on the server with the password from stdin, and refuses an
// address someone already registered; `platform admin verify` shows who
// registered an account and refuses a self-registered one without
// --i-know-who-registered.
func TestAdminBootstrapCannotBeSquatted(t *testing.T) {
	p := securityPlatform(t)
	const password = "operator-chosen-pass-1"
	t.Run("create makes a verified admin with the requested roles", func(t *testing.T) {
		out, err := adminCmd(t, p, password+"\n", "create", "--role", "fiat,gov", securityCreated)
		if err != nil || !strings.Contains(out, "role now: admin (fiat, gov)") || strings.Contains(out, password) {
			t.Fatalf("admin create: %v %s", err, out)
		}
		login := p.Post(t, "/api/auth/login", "", map[string]string{"email": securityCreated, "password": password})
		if login.Status != http.StatusOK {
			t.Fatalf("login: %d %s", login.Status, login.Body)
		}
		tok := login.JSON(t)["token"].(string)
		if me := p.Get(t, "/api/auth/me", tok).JSON(t); me["role"] != "admin" {
			t.Fatalf("me: %v", me)
		}
		if r := p.Get(t, "/api/fiat/admin/audit", tok); r.Status != http.StatusOK {
			t.Fatalf("fiat admin reads the audit: %d %s", r.Status, r.Body)
		}
		// A second create, and one for a role whose allowlist lacks the address, are refused.
		if out, err := adminCmd(t, p, password+"\n", "create", securityCreated); err == nil || !strings.Contains(out, "exists") {
			t.Fatalf("second create: %v %s", err, out)
		}
		if out, err := adminCmd(t, p, password+"\n", "create", "--role", "charity", "other@security.example.com"); err == nil ||
			!strings.Contains(out, "CHARITY_ADMIN_EMAILS") {
			t.Fatalf("create off the allowlist: %v %s", err, out)
		}
		// (securitySquatted is on the allowlist and not registered yet.)
		if out, err := adminCmd(t, p, "", "create", securitySquatted); err == nil || !strings.Contains(out, "no password") {
			t.Fatalf("create without a password: %v %s", err, out)
		}
		// The password is never an argument.
		if out, err := adminCmd(t, p, "", "create", "--password", password, securitySquatted); err == nil || strings.Contains(out, "created") {
			t.Fatalf("--password accepted: %v %s", err, out)
		}
	})
	t.Run("verify refuses a self-registered account and says who registered", func(t *testing.T) {
		squatter := p.RegisterEmail(t, securitySquatted)
		out, err := adminCmd(t, p, "", "verify", securitySquatted)
		if err == nil || !strings.Contains(out, "refused") || !strings.Contains(out, "registered itself") ||
			!strings.Contains(out, "from IP 127.0.0.1") || !strings.Contains(out, squatter.ID) {
			t.Fatalf("verify of a self-registered account: %v %s", err, out)
		}
		if me := p.Get(t, "/api/auth/me", squatter.Token).JSON(t); me["role"] != "user" {
			t.Fatalf("the squatter became %v", me["role"])
		}
		// Creating over the squatter is refused too, naming the registration.
		if out, err := adminCmd(t, p, password+"\n", "create", securitySquatted); err == nil || !strings.Contains(out, "registered itself") {
			t.Fatalf("create over a registered address: %v %s", err, out)
		}
		out, err = adminCmd(t, p, "", "verify", "--i-know-who-registered", securitySquatted)
		if err != nil || !strings.Contains(out, "role now: admin") {
			t.Fatalf("verify with --i-know-who-registered: %v %s", err, out)
		}
	})
}

// TestAdminStreamTicketNotTokenInURL: the admin stream refuses a bearer
// token in the URL and opens once with a ticket an admin minted.
func TestAdminStreamTicketNotTokenInURL(t *testing.T) {
	p := shared(t)
	admin := p.RegisterEmail(t, harness.FiatAdminEmail)
	get := func(query string) int {
		req, _ := http.NewRequest(http.MethodGet, p.BaseURL+"/api/fiat/admin/events?"+query, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close() // the stream stays open otherwise
		return resp.StatusCode
	}
	if s := get("access_token=" + admin.Token); s != http.StatusUnauthorized {
		t.Fatalf("token in the URL: %d, want 401", s)
	}
	r := p.Post(t, "/api/fiat/admin/events/ticket", admin.Token, map[string]any{})
	if r.Status != http.StatusCreated {
		t.Fatalf("mint: %d %s", r.Status, r.Body)
	}
	ticket := r.JSON(t)["ticket"].(string)
	if s := get("ticket=" + ticket); s != http.StatusOK {
		t.Fatalf("first use of the ticket: %d", s)
	}
	if s := get("ticket=" + ticket); s != http.StatusUnauthorized {
		t.Fatalf("second use of the ticket: %d, want 401", s)
	}
	if r := p.Post(t, "/api/fiat/admin/events/ticket", p.Register(t, "no-ticket").Token, map[string]any{}); r.Status != http.StatusForbidden {
		t.Fatalf("a user minted a ticket: %d %s", r.Status, r.Body)
	}
}
