package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	cledger "github.com/fintech/platform/consumers/ledger"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
)

// cmdLedger runs ledger maintenance subcommands.
//
//	platform ledger reanchor [-dry-run]
//
// reanchor finds source records (fiat transactions, mask charges, donations,
// governance decisions, trade operations) that have no ledger
// entry and queues a ledger.append for each through the outbox, so the one
// appender chains them (deduplicated on kind and source id). It never writes
// the chain table itself. A running relay (platform run or platform relay)
// publishes the queued records.
func cmdLedger(ctx context.Context, cfg Config, args []string) error {
	if len(args) == 0 || args[0] != "reanchor" {
		return usageError{"ledger: subcommands: reanchor [-dry-run]"}
	}
	var dryRun bool
	if _, err := parseFlags("ledger reanchor", args[1:], func(fs *flag.FlagSet) {
		fs.BoolVar(&dryRun, "dry-run", false, "count the records without an entry; queue nothing")
	}); err != nil {
		return err
	}
	pool, err := postgres.Connect(ctx, cfg.DatabaseURL, 2)
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	defer pool.Close()
	counts, err := cledger.Reanchor(ctx, pool, ledgerSources(), time.Now, dryRun)
	verb := "queued"
	if dryRun {
		verb = "missing (dry run, nothing queued)"
	}
	for _, s := range ledgerSources() {
		fmt.Printf("  %-20s %d %s\n", s.Name(), counts[s.Name()], verb)
	}
	if err != nil {
		return fmt.Errorf("reanchor: %w", err)
	}
	return nil
}

// ledgerSources lists the modules whose records must be anchored in the
// ledger. A source whose table does not exist is skipped.
func ledgerSources() []cledger.Source {
	return []cledger.Source{
		cledger.SQLSource{
			Label: "fiat transactions",
			Table: "fiat_transactions",
			EntryKinds: []string{schemas.LedgerKindTransfer, schemas.LedgerKindDeposit, schemas.LedgerKindWithdrawal,
				schemas.LedgerKindMerchantCharge, schemas.LedgerKindRequestPayment, schemas.LedgerKindRefund},
			Query: `
SELECT coalesce(nullif(d.ledger_entry_id, ''), '') AS entry_id,
       'fiat:' || t.kind AS kind,
       t.id AS source_id,
       CASE WHEN t.kind = 'deposit' THEN t.to_user ELSE t.from_user END AS actor_user_id,
       t.amount AS amount_cents,
       t.currency,
       json_build_object('reanchored', true, 'fromWallet', t.from_wallet, 'toWallet', t.to_wallet,
                         'feeMinor', t.fee)::text AS meta
FROM fiat_transactions t
LEFT JOIN fiat_deposits d ON d.transaction_id = t.id AND t.kind = 'deposit'
WHERE t.kind IN ('transfer', 'deposit', 'withdrawal', 'merchant_charge', 'request_payment', 'refund') AND t.status = 'completed'
  AND NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.kind = 'fiat:' || t.kind AND e.source_id = t.id)
ORDER BY t.created_at, t.id`,
		},
		cledger.SQLSource{
			Label:      "authorized mask charges",
			Table:      "mask_charges",
			EntryKinds: []string{schemas.LedgerKindMaskCharge},
			Query: `
SELECT '' AS entry_id,
       'mask:charge' AS kind,
       c.id AS source_id,
       c.user_id AS actor_user_id,
       c.amount_cents,
       c.currency,
       json_build_object('reanchored', true, 'maskId', c.mask_id, 'paymentRef', c.payment_ref,
                         'merchant', c.merchant, 'merchantCategory', c.merchant_category)::text AS meta
FROM mask_charges c
WHERE c.status = 'authorized'
  AND NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.kind = 'mask:charge' AND e.source_id = c.id)
ORDER BY c.created_at, c.id`,
		},
		charityLedgerSource(),
		govLedgerSource(),
		tradeLedgerSource(),
	}
}
