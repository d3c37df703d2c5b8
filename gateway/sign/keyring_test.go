package sign

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"strings"
	"testing"
)

func TestKeyring(t *testing.T) {
	t.Parallel()
	oldMaster, newMaster := strings.Repeat("a", 64), strings.Repeat("b", 64)
	old, err := NewKeyring(oldMaster)
	if err != nil {
		t.Fatal(err)
	}
	seed := bytes.Repeat([]byte{7}, 32)
	sealed, nonce, id, err := old.Seal(seed, []byte("key1\x00alice"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, seed) || id != old.CurrentID() || strings.Contains(id, oldMaster) {
		t.Fatalf("sealed %x id %s", sealed, id)
	}
	if got, err := old.Open(id, sealed, nonce, []byte("key1\x00alice")); err != nil || !bytes.Equal(got, seed) {
		t.Fatalf("open: %x %v", got, err)
	}
	// Bound to its row: another key id or owner does not open it.
	if _, err := old.Open(id, sealed, nonce, []byte("key1\x00mallory")); err == nil {
		t.Fatal("opened with another owner")
	}
	tampered := append([]byte(nil), sealed...)
	tampered[0] ^= 1
	if _, err := old.Open(id, tampered, nonce, []byte("key1\x00alice")); err == nil {
		t.Fatal("opened a tampered seal")
	}

	// Rotation: the new ring seals with the new key and still opens the old.
	rotated, err := NewKeyring(newMaster, oldMaster)
	if err != nil {
		t.Fatal(err)
	}
	if rotated.CurrentID() == id {
		t.Fatal("rotation kept the master key id")
	}
	if got, err := rotated.Open(id, sealed, nonce, []byte("key1\x00alice")); err != nil || !bytes.Equal(got, seed) {
		t.Fatalf("open after rotation: %v", err)
	}
	// Without the old master key the seal cannot be opened.
	only, _ := NewKeyring(newMaster)
	if _, err := only.Open(id, sealed, nonce, []byte("key1\x00alice")); !errors.Is(err, ErrUnknownMasterKey) {
		t.Fatalf("open with an unknown master: %v", err)
	}
	// The error never carries the master key.
	if _, err := NewKeyring("", " "); err == nil || strings.Contains(err.Error(), oldMaster) {
		t.Fatalf("empty ring: %v", err)
	}
}

func TestParseSignature(t *testing.T) {
	t.Parallel()
	_, priv, _ := ed25519.GenerateKey(nil)
	sig := ed25519.Sign(priv, []byte("m"))
	s := FormatSignature("2abcKEY", sig)
	if len(s) != len("2abcKEY.")+86 {
		t.Fatalf("signature %q", s)
	}
	id, got, ok := ParseSignature(s)
	if !ok || id != "2abcKEY" || !bytes.Equal(got, sig) {
		t.Fatalf("parse %q: %s %x %v", s, id, got, ok)
	}
	for _, bad := range []string{"", "nodot", ".abc", "key.", "key." + strings.Repeat("A", 85), "key." + strings.Repeat("A", 86) + "=",
		"ke/y." + s[strings.IndexByte(s, '.')+1:], s + "A", strings.Replace(s, ".", ".=", 1), "key." + strings.Repeat("*", 86)} {
		if _, _, ok := ParseSignature(bad); ok {
			t.Fatalf("accepted %q", bad)
		}
	}
}
