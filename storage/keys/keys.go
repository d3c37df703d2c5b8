// Package keys keeps what the database knows about the process's keys: the
// install's salt, the fingerprint of each key it was first started with,
// and the relabelling of master key ids stored beside sealed values.
package keys

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Salt returns the install's salt, making it on the first call.
func Salt(ctx context.Context, pool *pgxpool.Pool) ([]byte, error) {
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("draw install salt: %w", err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO install_salt (salt) VALUES ($1) ON CONFLICT (id) DO NOTHING`, fresh); err != nil {
		return nil, fmt.Errorf("store install salt: %w", err)
	}
	var salt []byte
	if err := pool.QueryRow(ctx, `SELECT salt FROM install_salt`).Scan(&salt); err != nil {
		return nil, fmt.Errorf("read install salt: %w", err)
	}
	return salt, nil
}

// Fingerprint is the keyed fingerprint of a key: HMAC-SHA256 under the
// install's salt of the variable's name and the key, hex. Without the salt
// it says nothing about the key; with it (a dump holds both), testing a
// guess costs what testing it against the key's own uses does.
func Fingerprint(salt []byte, variable, key string) string {
	m := hmac.New(sha256.New, salt)
	m.Write([]byte("platform/key-fingerprint/v1\x00" + variable + "\x00" + key))
	return hex.EncodeToString(m.Sum(nil))
}

// Key is one configured key: the one in use, and the older ones a
// "new,old" list still accepts (a rotation).
type Key struct {
	Variable string
	Current  string
	Older    []string
}

// ErrKeyChanged means a key is not the one the database was first started
// with (nor an older key of its rotation list).
var ErrKeyChanged = errors.New("is not the key this database was first started with")

// Check compares each key with the fingerprint stored for its variable:
// none stored stores the current key's; a stored fingerprint of one of the
// older keys is a rotation and becomes the current key's; any other is
// refused with an error naming the variable (one line, never the key).
func Check(ctx context.Context, pool *pgxpool.Pool, salt []byte, ks []Key) error {
	var errs []error
	for _, k := range ks {
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			cur := Fingerprint(salt, k.Variable, k.Current)
			var stored string
			err := tx.QueryRow(ctx, `SELECT fingerprint FROM key_fingerprints WHERE variable = $1 FOR UPDATE`, k.Variable).Scan(&stored)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				_, err = tx.Exec(ctx, `INSERT INTO key_fingerprints (variable, fingerprint) VALUES ($1, $2)
					ON CONFLICT (variable) DO NOTHING`, k.Variable, cur)
				return err
			case err != nil:
				return err
			case hmac.Equal([]byte(stored), []byte(cur)):
				return nil
			}
			for _, o := range k.Older {
				if hmac.Equal([]byte(stored), []byte(Fingerprint(salt, k.Variable, o))) {
					_, err = tx.Exec(ctx, `UPDATE key_fingerprints SET fingerprint = $2, updated_at = now() WHERE variable = $1`,
						k.Variable, cur)
					return err
				}
			}
			return fmt.Errorf("%s: %w (fingerprints differ): start with that key, or rotate by listing it after the new one (\"new,old\")",
				k.Variable, ErrKeyChanged)
		})
		if err != nil && !errors.Is(err, ErrKeyChanged) {
			err = fmt.Errorf("%s: check key fingerprint: %w", k.Variable, err)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// SealedText names a text column holding values sealed by
// storage/sealed.Keyring.SealText ("sealed:v1:<id>:…").
type SealedText struct{ Table, Column string }

// SealedID names a column holding a bare master key id.
type SealedID struct{ Table, Column string }

// Relabel rewrites the master key ids stored before ids were salted
// (legacy → salted, storage/sealed.Keyring.LegacyIDs) in the given
// columns; the sealed bytes do not change, only the label beside them.
// Idempotent: a second run finds no legacy id. It returns the rows changed.
func Relabel(ctx context.Context, pool *pgxpool.Pool, ids map[string]string, texts []SealedText, bare []SealedID) (int64, error) {
	var n int64
	for legacy, salted := range ids {
		for _, c := range texts {
			tag, err := pool.Exec(ctx, `UPDATE `+pgx.Identifier{c.Table}.Sanitize()+` SET `+pgx.Identifier{c.Column}.Sanitize()+
				` = $2 || substr(`+pgx.Identifier{c.Column}.Sanitize()+`, length($1) + 1)
				WHERE left(`+pgx.Identifier{c.Column}.Sanitize()+`, length($1)) = $1`,
				"sealed:v1:"+legacy+":", "sealed:v1:"+salted+":")
			if err != nil {
				return n, fmt.Errorf("relabel %s.%s: %w", c.Table, c.Column, err)
			}
			n += tag.RowsAffected()
		}
		for _, c := range bare {
			tag, err := pool.Exec(ctx, `UPDATE `+pgx.Identifier{c.Table}.Sanitize()+` SET `+pgx.Identifier{c.Column}.Sanitize()+
				` = $2 WHERE `+pgx.Identifier{c.Column}.Sanitize()+` = $1`, legacy, salted)
			if err != nil {
				return n, fmt.Errorf("relabel %s.%s: %w", c.Table, c.Column, err)
			}
			n += tag.RowsAffected()
		}
	}
	return n, nil
}
