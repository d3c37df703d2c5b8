package sign

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// HKDF labels: one derived key encrypts, another names the master key.
const (
	sealInfo = "platform/sign/seed-seal/v1"
	idInfo   = "platform/sign/master-key-id/v1"
)

// ErrUnknownMasterKey means a key was sealed under a master key that is no
// longer configured.
var ErrUnknownMasterKey = errors.New("signing key sealed under a master key that is not configured")

// Keyring seals and opens users' private keys with AES-256-GCM under keys
// derived (HKDF-SHA256) from the configured master keys. The first master
// key seals; every configured one opens, so SIGNING_MASTER_KEY can rotate
// ("new,old") without losing keys sealed under the old one. Only a derived
// fingerprint (the master key id) is ever stored; the master key itself
// never leaves the process and is never logged or put in an error.
type Keyring struct {
	current string
	aeads   map[string]cipher.AEAD
}

// NewKeyring builds the ring from master keys, current first (the generated
// default is 64 hex characters; use 32 or more random characters). Empty
// entries are ignored; at least one key is required.
func NewKeyring(masters ...string) (*Keyring, error) {
	r := &Keyring{aeads: map[string]cipher.AEAD{}}
	for i, m := range masters {
		m = strings.TrimSpace(m)
		if m == "" {
			continue
		}
		key, err := hkdf.Key(sha256.New, []byte(m), nil, sealInfo, 32)
		if err != nil {
			return nil, fmt.Errorf("SIGNING_MASTER_KEY: derive key %d: %w", i+1, err)
		}
		idBytes, err := hkdf.Key(sha256.New, []byte(m), nil, idInfo, 8)
		if err != nil {
			return nil, fmt.Errorf("SIGNING_MASTER_KEY: derive id %d: %w", i+1, err)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, fmt.Errorf("SIGNING_MASTER_KEY: key %d: %w", i+1, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("SIGNING_MASTER_KEY: key %d: %w", i+1, err)
		}
		id := "mk-" + hex.EncodeToString(idBytes)
		if r.current == "" {
			r.current = id
		}
		r.aeads[id] = aead
	}
	if r.current == "" {
		return nil, errors.New("SIGNING_MASTER_KEY: no master key configured")
	}
	return r, nil
}

// CurrentID names the master key that seals new keys.
func (r *Keyring) CurrentID() string { return r.current }

// Seal encrypts plaintext under the current master key, bound to aad (the
// key id and owner, so a sealed seed cannot be moved to another row).
func (r *Keyring) Seal(plaintext, aad []byte) (sealed, nonce []byte, masterID string, err error) {
	aead := r.aeads[r.current]
	nonce = make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, nil, "", fmt.Errorf("draw nonce: %w", err)
	}
	return aead.Seal(nil, nonce, plaintext, aad), nonce, r.current, nil
}

// Open decrypts what Seal produced under the master key masterID.
func (r *Keyring) Open(masterID string, sealed, nonce, aad []byte) ([]byte, error) {
	aead, ok := r.aeads[masterID]
	if !ok {
		return nil, ErrUnknownMasterKey
	}
	if len(nonce) != aead.NonceSize() {
		return nil, errors.New("open signing key: bad nonce")
	}
	pt, err := aead.Open(nil, nonce, sealed, aad)
	if err != nil {
		return nil, errors.New("open signing key: authentication failed")
	}
	return pt, nil
}
