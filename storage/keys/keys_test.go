package keys

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/storage/sealed"
)

// TestCheckRefusesAnotherKey: the first start stores the fingerprints; the
// same keys start again; another key is refused naming its variable (never
// the key); a "new,old" rotation is accepted and then the old key alone is
// refused. The stored fingerprint is keyed by the install's salt.
func TestCheckRefusesAnotherKey(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	salt, err := Salt(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := Salt(ctx, pool); err != nil || string(again) != string(salt) || len(salt) != 32 {
		t.Fatalf("salt changed or short: %x then %x (%v)", salt, again, err)
	}
	oldKey, newKey, other := strings.Repeat("1a", 32), strings.Repeat("2b", 32), strings.Repeat("3c", 32)
	start := func(current string, older ...string) error {
		return Check(ctx, pool, salt, []Key{{Variable: "DATA_ENCRYPTION_KEY", Current: current, Older: older},
			{Variable: "LEDGER_SALT", Current: "salt-" + strings.Repeat("9", 60)}})
	}
	if err := start(oldKey); err != nil {
		t.Fatalf("first start: %v", err)
	}
	var stored string
	if err := pool.QueryRow(ctx, `SELECT fingerprint FROM key_fingerprints WHERE variable = 'DATA_ENCRYPTION_KEY'`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != Fingerprint(salt, "DATA_ENCRYPTION_KEY", oldKey) || stored == Fingerprint(nil, "DATA_ENCRYPTION_KEY", oldKey) {
		t.Fatalf("stored fingerprint %s is not the salted HMAC", stored)
	}
	if err := start(oldKey); err != nil {
		t.Fatalf("second start with the same key: %v", err)
	}
	err = start(other)
	if !errors.Is(err, ErrKeyChanged) || strings.Count(err.Error(), "\n") != 0 ||
		!strings.HasPrefix(err.Error(), "DATA_ENCRYPTION_KEY: ") || strings.Contains(err.Error(), other) {
		t.Fatalf("another key: %v, want one line naming DATA_ENCRYPTION_KEY", err)
	}
	if err := start(newKey, oldKey); err != nil {
		t.Fatalf("rotation new,old: %v", err)
	}
	if err := start(newKey); err != nil {
		t.Fatalf("new key alone after the rotation: %v", err)
	}
	if err := start(oldKey); !errors.Is(err, ErrKeyChanged) {
		t.Fatalf("the old key after the rotation: %v", err)
	}
}

// TestRelabelKeepsSealedValuesOpen: values sealed under the unsalted master
// key id are relabelled to the salted id, open with the salted ring, and a
// second run changes nothing.
func TestRelabelKeepsSealedValuesOpen(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	salt, err := Salt(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	master := strings.Repeat("4d", 32)
	legacy, err := sealed.NewKeyring("DATA_ENCRYPTION_KEY", "data", master)
	if err != nil {
		t.Fatal(err)
	}
	salted, err := sealed.NewSaltedKeyring("DATA_ENCRYPTION_KEY", "data", salt, master)
	if err != nil {
		t.Fatal(err)
	}
	old, err := legacy.SealText("KZ86 125K ZT50", "payout:p1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE sealed_t (v text, id text)`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO sealed_t VALUES ($1, $2), ('plain', 'other')`, old, legacy.CurrentID()); err != nil {
		t.Fatal(err)
	}
	n, err := Relabel(ctx, pool, salted.LegacyIDs(), []SealedText{{"sealed_t", "v"}}, []SealedID{{"sealed_t", "id"}})
	if err != nil || n != 2 {
		t.Fatalf("relabel: %d rows, %v; want 2", n, err)
	}
	var v, id string
	if err := pool.QueryRow(ctx, `SELECT v, id FROM sealed_t WHERE v != 'plain'`).Scan(&v, &id); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(v, legacy.CurrentID()) || !strings.Contains(v, salted.CurrentID()) || id != salted.CurrentID() {
		t.Fatalf("after relabel: %s %s", v, id)
	}
	if got, err := salted.OpenText(v, "payout:p1"); err != nil || got != "KZ86 125K ZT50" {
		t.Fatalf("open relabelled: %q %v", got, err)
	}
	if n, err := Relabel(ctx, pool, salted.LegacyIDs(), []SealedText{{"sealed_t", "v"}}, []SealedID{{"sealed_t", "id"}}); err != nil || n != 0 {
		t.Fatalf("second relabel: %d %v", n, err)
	}
}
