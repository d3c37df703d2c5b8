package main

import (
	"testing"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres/pgtest"
)

// TestCharityLedgerSource checks that `platform ledger reanchor` finds the
// donations without a charity:donation entry and queues each with the entry
// id the donation answered with, an anonymous one naming no donor.
func TestCharityLedgerSource(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	exec := execOn(t, pool)
	exec(`INSERT INTO fiat_wallets (id, user_id, currency, kind) VALUES ('campaign-c1', 'campaign:c1', 'KZT', 'campaign')`)
	exec(`INSERT INTO charity_campaigns (id, proposer_user_id, title, description, category, goal_kzt, status, wallet_id, created_at)
		VALUES ('c1', 'org', 't', 'd', 'water', 100, 'active', 'campaign-c1', now())`)
	donate := func(id, donor, entry string, anonymous bool) {
		exec(`INSERT INTO charity_donations (id, campaign_id, donor_user_id, wallet_id, amount_kzt, anonymous, transaction_id,
			ledger_entry_id, created_at) VALUES ($1, 'c1', $2, 'w', 5, $3, $4, $5, now())`, id, donor, anonymous, "tx-"+id, entry)
	}
	donate("d1", "alice", "e1", false)
	donate("d2", "bob", "e2", true)
	donate("d3", "carol", "e3", false)
	exec(`INSERT INTO ledger_entries (height, id, kind, source_id, ts, prev_hash, hash)
		VALUES (1, 'e3', 'charity:donation', 'd3', now(), '0', 'h')`)

	n, got := reanchorQueued(t, pool, charityLedgerSource())
	if n != 2 {
		t.Fatalf("reanchor found %d donations without an entry, want 2", n)
	}
	if len(got) != 2 || got[0].EntryID != "e1" || got[0].SourceID != "d1" || got[0].ActorUserID != "alice" ||
		got[0].Kind != schemas.LedgerKindDonation || got[0].AmountCents == nil || *got[0].AmountCents != 5 ||
		got[1].EntryID != "e2" || got[1].ActorUserID != schemas.AnonymousDonor {
		t.Fatalf("queued %+v", got)
	}
}
