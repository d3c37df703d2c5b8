package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	cledger "github.com/fintech/platform/consumers/ledger"
	"github.com/fintech/platform/schemas"
	sfiat "github.com/fintech/platform/storage/fiat"
	smask "github.com/fintech/platform/storage/mask"
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
			Query: sfiat.MissingLedgerEntriesSQL,
		},
		cledger.SQLSource{
			Label:      "authorized mask charges",
			Table:      "mask_charges",
			EntryKinds: []string{schemas.LedgerKindMaskCharge},
			Query:      smask.MissingLedgerEntriesSQL,
		},
		charityLedgerSource(),
		govLedgerSource(),
		tradeLedgerSource(),
	}
}
