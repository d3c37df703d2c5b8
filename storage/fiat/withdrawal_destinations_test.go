package fiat_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/storage/sealed"
)

// TestSealLegacyWithdrawals: withdrawals written in clear before 0148 are
// sealed by the data step, their memo and audit detail replaced by the
// hint; a second run does nothing; the audit stays append-only.
func TestSealLegacyWithdrawals(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	vault, err := sealed.NewKeyring("DATA_ENCRYPTION_KEY", "data", strings.Repeat("k", 64))
	if err != nil {
		t.Fatal(err)
	}
	const iban = "KZ86125KZT5004100100"
	now := time.Now().UTC()
	for _, sql := range []string{
		`INSERT INTO fiat_transactions (id, kind, status, from_wallet, from_user, amount, currency, memo, ref_id, created_at)
VALUES ('tx1', 'withdrawal', 'completed', 'w1', 'u1', 100, 'KZT', '` + iban + `', 'wd1', $1)`,
		`INSERT INTO fiat_audit (id, actor, action, subject, amount, currency, detail, created_at)
VALUES ('a1', 'u1', 'withdrawal', 'tx1', 100, 'KZT', 'to ` + iban + `', $1)`,
	} {
		if _, err := pool.Exec(ctx, sql, now); err != nil {
			t.Fatal(err)
		}
	}
	n, err := fiat.SealLegacyWithdrawals(ctx, pool, vault)
	if err != nil || n != 1 {
		t.Fatalf("sealed %d: %v", n, err)
	}
	var memo, detail, stored, hint string
	if err := pool.QueryRow(ctx, `SELECT t.memo, a.detail, d.destination_sealed, d.hint FROM fiat_transactions t
JOIN fiat_audit a ON a.subject = t.id JOIN fiat_withdrawal_destinations d ON d.withdrawal_id = t.ref_id WHERE t.id = 'tx1'`).
		Scan(&memo, &detail, &stored, &hint); err != nil {
		t.Fatal(err)
	}
	if memo != "****0100" || detail != "to ****0100" || hint != "****0100" || strings.Contains(stored, iban) {
		t.Fatalf("after sealing: memo %q detail %q stored %q hint %q", memo, detail, stored, hint)
	}
	if got, err := vault.OpenText(stored, fiat.WithdrawalAAD("wd1")); err != nil || got != iban {
		t.Fatalf("opened %q %v", got, err)
	}
	if n, err := fiat.SealLegacyWithdrawals(ctx, pool, vault); err != nil || n != 0 {
		t.Fatalf("second run sealed %d: %v", n, err)
	}
	if _, err := pool.Exec(ctx, `UPDATE fiat_audit SET detail = 'x' WHERE id = 'a1'`); err == nil {
		t.Fatal("fiat_audit is no longer append-only")
	}
}

// TestPruneRefusedDestinations: a refused withdrawal's sealed destination
// (no transaction names it) goes once older than the cut-off; a completed
// one's stays, and so does a recent refused one.
func TestPruneRefusedDestinations(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	old, recent := time.Now().Add(-8*24*time.Hour).UTC(), time.Now().UTC()
	if _, err := pool.Exec(ctx, `INSERT INTO fiat_transactions (id, kind, status, from_wallet, from_user, amount, currency, memo, ref_id, created_at)
VALUES ('tx-paid', 'withdrawal', 'completed', 'w1', 'u1', 100, 'KZT', '****0100', 'wd-paid', $1)`, old); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO fiat_withdrawal_destinations (withdrawal_id, user_id, destination_sealed, hint, created_at) VALUES
('wd-paid', 'u1', 'sealed:v1:x:paid', '****0100', $1), ('wd-refused', 'u1', 'sealed:v1:x:refused', '****0200', $1),
('wd-refused-recent', 'u1', 'sealed:v1:x:recent', '****0300', $2)`, old, recent); err != nil {
		t.Fatal(err)
	}
	n, err := fiat.PruneRefusedDestinations(ctx, pool, time.Now().Add(-7*24*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("pruned %d (%v), want the old refused one", n, err)
	}
	var left []string
	rows, err := pool.Query(ctx, `SELECT withdrawal_id FROM fiat_withdrawal_destinations ORDER BY withdrawal_id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		_ = rows.Scan(&id)
		left = append(left, id)
	}
	if strings.Join(left, ",") != "wd-paid,wd-refused-recent" {
		t.Fatalf("left %v", left)
	}
}
