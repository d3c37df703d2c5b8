package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fintech/platform/storage/keys"
	"github.com/fintech/platform/storage/sealed"
)

// The columns holding values sealed by the data keyring, and the one
// holding the signing keyring's master key ids: their stored ids are
// relabelled from unsalted to salted at start (storage/keys.Relabel).
var (
	dataSealedColumns = []keys.SealedText{
		{Table: "fiat_payouts", Column: "bank_account"},
		{Table: "fiat_kyc", Column: "document_number"},
		{Table: "webhook_subscriptions", Column: "secret"},
		{Table: "fiat_withdrawal_destinations", Column: "destination_sealed"},
	}
	signSealedIDs = []keys.SealedID{{Table: "sign_keys", Column: "master_key_id"}}
)

// openKeys reads (or makes) the install's salt, refuses in production a
// key that is not the one the database was first started with, builds the
// data and signing keyrings with salted master key ids, and relabels the
// ids stored before they were salted, so every sealed value still opens.
func (a *app) openKeys(ctx context.Context) error {
	salt, err := keys.Salt(ctx, a.pool)
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42P01" {
			return fmt.Errorf("DATABASE_URL: the database is not migrated (run `platform migrate`): %w", err)
		}
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	dataKeys, signKeys := splitKeys(a.cfg.DataKey), splitKeys(a.cfg.SigningKey)
	if !a.cfg.development() {
		if err := keys.Check(ctx, a.pool, salt, fingerprintedKeys(a.cfg)); err != nil {
			return err
		}
	}
	if a.vault, err = sealed.NewSaltedKeyring("DATA_ENCRYPTION_KEY", "data", salt, dataKeys...); err != nil {
		return err
	}
	if a.signRing, err = sealed.NewSaltedKeyring("SIGNING_MASTER_KEY", "sign", salt, signKeys...); err != nil {
		return err
	}
	if _, err := keys.Relabel(ctx, a.pool, a.vault.LegacyIDs(), dataSealedColumns, nil); err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	if _, err := keys.Relabel(ctx, a.pool, a.signRing.LegacyIDs(), nil, signSealedIDs); err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	return nil
}

// fingerprintedKeys are the secrets of secretTable checked against the
// fingerprints the database keeps.
func fingerprintedKeys(c Config) []keys.Key {
	var out []keys.Key
	for _, s := range secretTable {
		if !s.fingerprinted {
			continue
		}
		k := keys.Key{Variable: s.name, Current: *s.field(&c)}
		if s.list {
			ks := splitKeys(k.Current)
			k.Current, k.Older = first(ks), rest(ks)
		}
		out = append(out, k)
	}
	return out
}

func splitKeys(list string) []string {
	var out []string
	for _, k := range strings.Split(list, ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}

func first(ks []string) string {
	if len(ks) == 0 {
		return ""
	}
	return ks[0]
}

func rest(ks []string) []string {
	if len(ks) < 2 {
		return nil
	}
	return ks[1:]
}
