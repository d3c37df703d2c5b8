package sign_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/storage/sign"
)

func newKey(user string) sign.KeyRow {
	return sign.KeyRow{ID: schemas.NewID(), UserID: user, PublicKey: bytes.Repeat([]byte{1}, 32),
		SealedSeed: bytes.Repeat([]byte{2}, 48), Nonce: bytes.Repeat([]byte{3}, 12), MasterKeyID: "mk-test",
		Status: sign.StatusActive, CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
}

func TestKeysAndSignatures(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	st := sign.NewStore(pool)

	if _, err := st.ActiveKey(ctx, "alice"); !sign.IsNotFound(err) {
		t.Fatalf("no key yet: %v", err)
	}
	// Concurrent first uses create one active key.
	var wg sync.WaitGroup
	got := make([]sign.KeyRow, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := st.CreateFirstKey(ctx, newKey("alice"))
			if err != nil {
				t.Error(err)
			}
			got[i] = k
		}()
	}
	wg.Wait()
	for _, k := range got {
		if k.ID != got[0].ID || k.Status != sign.StatusActive {
			t.Fatalf("two active keys: %s %s", k.ID, got[0].ID)
		}
	}
	first := got[0]

	// Rotation retires the active key and keeps it readable.
	next := newKey("alice")
	retired, err := st.Rotate(ctx, next)
	if err != nil || retired != first.ID {
		t.Fatalf("rotate: %q %v", retired, err)
	}
	old, err := st.Key(ctx, first.ID)
	if err != nil || old.Status != sign.StatusRetired || old.RetiredAt == nil {
		t.Fatalf("old key: %+v %v", old, err)
	}
	if a, _ := st.ActiveKey(ctx, "alice"); a.ID != next.ID {
		t.Fatalf("active %s, want %s", a.ID, next.ID)
	}
	if keys, _ := st.Keys(ctx, "alice"); len(keys) != 2 {
		t.Fatalf("keys %d", len(keys))
	}
	// A rotation for a user without a key just creates one.
	if retired, err := st.Rotate(ctx, newKey("bob")); err != nil || retired != "" {
		t.Fatalf("first rotation: %q %v", retired, err)
	}

	// Reseal replaces the sealed seed and its master key id.
	if err := st.Reseal(ctx, next.ID, bytes.Repeat([]byte{9}, 48), bytes.Repeat([]byte{8}, 12), "mk-new"); err != nil {
		t.Fatal(err)
	}
	if k, _ := st.Key(ctx, next.ID); k.MasterKeyID != "mk-new" || k.SealedSeed[0] != 9 {
		t.Fatalf("resealed %+v", k)
	}

	digest := "ab" + string(bytes.Repeat([]byte("0"), 62))
	if err := st.RecordSignature(ctx, sign.SignatureRow{ID: schemas.NewID(), KeyID: next.ID, UserID: "alice",
		Signature: next.ID + ".sig", PayloadDigest: digest, CanonicalPayload: []byte(`{}`), CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if d, err := st.SignatureDigest(ctx, next.ID+".sig"); err != nil || d != digest {
		t.Fatalf("digest %q %v", d, err)
	}
	if _, err := st.SignatureDigest(ctx, "unknown.sig"); !sign.IsNotFound(err) {
		t.Fatalf("unknown signature: %v", err)
	}
	// A digest that is not hex SHA-256 is refused by the schema.
	err = st.RecordSignature(ctx, sign.SignatureRow{ID: schemas.NewID(), KeyID: next.ID, UserID: "alice",
		Signature: "x", PayloadDigest: "nope", CanonicalPayload: []byte(`{}`), CreatedAt: time.Now()})
	if err == nil || errors.Is(err, context.Canceled) {
		t.Fatalf("bad digest stored: %v", err)
	}
}
