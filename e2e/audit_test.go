package e2e

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/schemas"
)

// TestBackgroundAuditAlarm: a completed transfer with no ledger entry and
// no append in flight (written straight into Postgres) is found by the
// background audit: platform_audit_failed_checks goes to 1 for the check
// that names it, and the console's audit route lists it as FAILED.
func TestBackgroundAuditAlarm(t *testing.T) {
	t.Parallel() // a platform of its own, like the ledger tamper test
	p, pool := ledgerPlatform(t)
	admin := p.RegisterEmail(t, harness.FiatAdminEmail)
	audit := func() schemas.ConsoleAudit {
		t.Helper()
		r := p.Get(t, "/api/platform/admin/audit", admin.Token)
		if r.Status != http.StatusOK {
			t.Fatalf("GET /api/platform/admin/audit: %d %s", r.Status, r.Body)
		}
		var a schemas.ConsoleAudit
		r.Decode(t, &a)
		return a
	}
	metric := func() string {
		t.Helper()
		resp, err := http.Get("http://" + p.MetricsAddr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	const anchored = `platform_audit_failed_checks{check="ledger entry per source"}`
	harness.Eventually(t, 30*time.Second, "a first clean audit", func() bool {
		a := audit()
		return a.RanAt != nil && a.Failed == 0 && strings.Contains(metric(), anchored+" 0")
	})

	id := "audit-" + strings.ToLower(harness.NewID())
	if _, err := pool.Exec(context.Background(), `
INSERT INTO fiat_transactions (id, kind, status, from_wallet, to_wallet, from_user, to_user, amount, fee, currency, created_at)
VALUES ($1, 'transfer', 'completed', 'nowhere-1', 'nowhere-2', 'u1', 'u2', 100, 0, 'KZT', now())`, id); err != nil {
		t.Fatal(err)
	}
	var a schemas.ConsoleAudit
	harness.Eventually(t, 30*time.Second, "the missing entry found", func() bool {
		a = audit()
		return a.Failed > 0 && strings.Contains(metric(), anchored+" 1")
	})
	found := false
	for _, c := range a.Checks {
		found = found || c.Status == "FAILED" && c.Check == "ledger entry per source" && strings.Contains(c.Detail, "fiat:transfer "+id)
	}
	if !found {
		t.Fatalf("the console's audit does not name %s: %+v", id, a)
	}
}
