package sealed

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestKeyring(t *testing.T) {
	t.Parallel()
	oldMaster, newMaster := strings.Repeat("a", 64), strings.Repeat("b", 64)
	old, err := NewKeyring("TEST_KEY", "test", oldMaster)
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
	rotated, err := NewKeyring("TEST_KEY", "test", newMaster, oldMaster)
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
	only, _ := NewKeyring("TEST_KEY", "test", newMaster)
	if _, err := only.Open(id, sealed, nonce, []byte("key1\x00alice")); !errors.Is(err, ErrUnknownMasterKey) {
		t.Fatalf("open with an unknown master: %v", err)
	}
	// The error never carries the master key.
	if _, err := NewKeyring("TEST_KEY", "test", "", " "); err == nil || strings.Contains(err.Error(), oldMaster) {
		t.Fatalf("empty ring: %v", err)
	}
}

func TestSealText(t *testing.T) {
	t.Parallel()
	ring, err := NewKeyring("TEST_KEY", "test", strings.Repeat("c", 64))
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := ring.SealText("KZ12 3456 7890", "payout:p1")
	if err != nil || strings.Contains(sealed, "3456") || !strings.HasPrefix(sealed, "sealed:v1:") {
		t.Fatalf("sealed %q %v", sealed, err)
	}
	if got, err := ring.OpenText(sealed, "payout:p1"); err != nil || got != "KZ12 3456 7890" {
		t.Fatalf("open: %q %v", got, err)
	}
	if _, err := ring.OpenText(sealed, "payout:p2"); err == nil {
		t.Fatal("opened on another row")
	}
	if got, err := ring.OpenText("stored before encryption", "payout:p1"); err != nil || got != "stored before encryption" {
		t.Fatalf("legacy plaintext: %q %v", got, err)
	}
	other, _ := NewKeyring("TEST_KEY", "other-purpose", strings.Repeat("c", 64))
	if _, err := other.OpenText(sealed, "payout:p1"); err == nil {
		t.Fatal("another purpose opened the value")
	}
	for _, bad := range []string{"sealed:v1:", "sealed:v1:mk-00:AAAA", "sealed:v1:" + ring.CurrentID() + ":!!"} {
		if _, err := ring.OpenText(bad, "payout:p1"); err == nil {
			t.Fatalf("opened %q", bad)
		}
	}
}

// TestSaltedIDs: the stored master key id depends on the install's salt,
// so a dump's ids cannot be matched against a table of guessed masters made
// once for every install; values sealed under the unsalted id still open.
func TestSaltedIDs(t *testing.T) {
	t.Parallel()
	master := strings.Repeat("c", 64)
	legacy, err := NewKeyring("TEST_KEY", "test", master)
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewSaltedKeyring("TEST_KEY", "test", []byte("install-a-salt-32-bytes-long...."), master)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewSaltedKeyring("TEST_KEY", "test", []byte("install-b-salt-32-bytes-long...."), master)
	if err != nil {
		t.Fatal(err)
	}
	if a.CurrentID() == legacy.CurrentID() || a.CurrentID() == b.CurrentID() {
		t.Fatalf("ids: unsalted %s, install a %s, install b %s: want three different", legacy.CurrentID(), a.CurrentID(), b.CurrentID())
	}
	old, err := legacy.SealText("KZ00 1234", "row-1")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := a.OpenText(old, "row-1"); err != nil || got != "KZ00 1234" {
		t.Fatalf("salted ring opening an unsalted value: %q %v", got, err)
	}
	if m := a.LegacyIDs(); len(m) != 1 || m[legacy.CurrentID()] != a.CurrentID() {
		t.Fatalf("legacy ids %v", m)
	}
	relabelled := strings.Replace(old, legacy.CurrentID(), a.CurrentID(), 1)
	if got, err := a.OpenText(relabelled, "row-1"); err != nil || got != "KZ00 1234" {
		t.Fatalf("relabelled value: %q %v", got, err)
	}
	if _, err := b.OpenText(relabelled, "row-1"); !errors.Is(err, ErrUnknownMasterKey) {
		t.Fatalf("another install's ring opened install a's label: %v", err)
	}
}
