package main

import (
	"context"
	"errors"
)

// cmdLedger runs ledger maintenance subcommands.
func cmdLedger(ctx context.Context, cfg Config, args []string) error {
	return usageError{"ledger: subcommands: reanchor"}
}

var _ = errors.New
