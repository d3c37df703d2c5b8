package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/storage/sealed"
)

// migrateData runs the data steps of migrations that need the server's keys
// (SQL cannot seal), right after goose, from `platform migrate` and
// `platform run`. Each step is idempotent: a re-run finds nothing to do.
func migrateData(ctx context.Context, pool *pgxpool.Pool, vault *sealed.Keyring) (int, error) {
	// 0148: withdrawal destinations written in clear before it.
	n, err := fiat.SealLegacyWithdrawals(ctx, pool, vault)
	if err != nil {
		return n, fmt.Errorf("DATABASE_URL: migration 0148 data step: %w", err)
	}
	return n, nil
}

// migrateDataWith builds the data keyring from cfg and runs migrateData.
func migrateDataWith(ctx context.Context, cfg Config, pool *pgxpool.Pool) (int, error) {
	if err := cfg.loadSecrets(); err != nil {
		return 0, err
	}
	a := &app{cfg: cfg, pool: pool}
	if err := a.openKeys(ctx); err != nil {
		return 0, err
	}
	return migrateData(ctx, pool, a.vault)
}
