package mask_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// TestRiskFlagBudgetPerIP: free sign-ups behind one address each flag the
// same merchant once a day; the per-IP budget stops the flags (never the
// charges) after schemas.BudgetMaskRiskFlag.PerIP, while a charge from
// another address still flags; the stopped flags are held for review.
func TestRiskFlagBudgetPerIP(t *testing.T) {
	f := newFixture(t)
	if _, err := f.pool.Exec(context.Background(), `INSERT INTO fiat_merchant_keys (id, user_id, key_hash, key_prefix, created_at)
VALUES ('k1', 'merchant-user', 'h1', 'p', now())`); err != nil {
		t.Fatal(err)
	}
	// One owner's risky charge (score 70, as in TestRiskFlagAndWindows):
	// three small ones, a lock decline, then 90% of what remains.
	flags := func(owner, ip string) int {
		m := f.issue(owner, schemas.MaskIssue{Kind: schemas.MaskKindMerchantLocked, LockedToMerchant: "A", SpendLimitCents: 1_030})
		f.apply(chargeCmd(t, owner, m.ID, "a1", 10, "A", ""), chargeCmd(t, owner, m.ID, "a2", 10, "A", ""),
			chargeCmd(t, owner, m.ID, "a3", 10, "A", ""), chargeCmd(t, owner, m.ID, "locked", 10, "B", ""))
		o := f.apply(env(t, schemas.TypeMaskCharge, m.ID, owner, schemas.MaskCharge{MaskID: m.ID, UserID: owner,
			AmountCents: 900, Merchant: "A", PaymentRef: "flag", MerchantUserID: "merchant-user", ClientIP: ip}))[0]
		if c := decodeCharge(t, o); c.RiskScore < 70 {
			t.Fatalf("%s: the risky charge: %d %s", owner, o.Status, o.Body)
		}
		return len(emitted(o, topics.ReputationCommands, schemas.TypeReputationEvent))
	}
	total := 0
	for i := range schemas.BudgetMaskRiskFlag.PerIP + 2 {
		total += flags("owner-"+strconv.FormatInt(i, 10), "203.0.113.7")
	}
	if int64(total) != schemas.BudgetMaskRiskFlag.PerIP {
		t.Fatalf("%d flags from one IP, want %d", total, schemas.BudgetMaskRiskFlag.PerIP)
	}
	if n := flags("owner-elsewhere", "198.51.100.1"); n != 1 {
		t.Fatalf("a charge from another IP: %d flags", n)
	}
	// The flags the IP budget stopped are held for review, not dropped.
	var held int
	var reason string
	if err := f.pool.QueryRow(context.Background(), `SELECT count(*), min(reason) FROM mask_held_risk_flags
WHERE merchant_user_id = 'merchant-user' AND client_ip = '203.0.113.7' AND risk_score >= 70`).Scan(&held, &reason); err != nil {
		t.Fatal(err)
	}
	if held != 2 || reason != "ip" {
		t.Fatalf("%d flags held (reason %q), want the 2 past the IP budget held for review", held, reason)
	}
}
