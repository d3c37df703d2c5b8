package fiat

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/schemas"
	spipeline "github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/topics/names"
)

// WalletCreatedRow is the wallet.created event of a new wallet, for the
// event log of the transaction that inserts it (the analytics copy names a
// wallet's owner, currency and kind from it).
func WalletCreatedRow(id, userID, currency, kind string, at time.Time) (spipeline.OutboxRow, error) {
	env, err := schemas.New(schemas.TypeWalletCreated, id, userID, schemas.WalletCreated{
		WalletID: id, UserID: userID, Currency: currency, Kind: kind, CreatedAt: at.UTC()}, at)
	if err != nil {
		return spipeline.OutboxRow{}, err
	}
	return spipeline.EventRow(names.EventsFiat, env)
}

// insertWalletCreated appends the wallet.created event inside tx.
func insertWalletCreated(ctx context.Context, tx pgx.Tx, id, userID, currency, kind string, at time.Time) error {
	row, err := WalletCreatedRow(id, userID, currency, kind, at)
	if err != nil {
		return fmt.Errorf("encode wallet.created: %w", err)
	}
	return spipeline.InsertOutbox(ctx, tx, []spipeline.OutboxRow{row})
}
