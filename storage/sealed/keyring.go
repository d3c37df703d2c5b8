// Package sealed encrypts what the platform keeps at rest that it must be
// able to read back but nobody with the database alone may read: users'
// signing keys, KYC document numbers, bank accounts and webhook secrets.
// AES-256-GCM under keys derived (HKDF-SHA256) from master keys given in
// the environment (or generated once into DATA_DIR/secrets); each sealed
// value names the master key that sealed it, so master keys rotate.
package sealed

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// ErrUnknownMasterKey means a value was sealed under a master key that is
// no longer configured.
var ErrUnknownMasterKey = errors.New("sealed under a master key that is not configured")

// Keyring seals and opens values with AES-256-GCM under keys derived
// (HKDF-SHA256) from the configured master keys. The first master key
// seals; every configured one opens, so the master key can rotate
// ("new,old") without losing what the old one sealed. Only a derived
// fingerprint (the master key id) is ever stored; the master key itself
// never leaves the process and is never logged or put in an error.
//
// The id is keyed by the install's salt (NewSaltedKeyring): an id derived
// from the master alone would let anyone holding a dump test guesses of
// the master offline against it, with one HKDF per guess and the same
// table for every install. Ids made before the salt (NewKeyring's) still
// open what they sealed; LegacyIDs maps them to the salted ids, for the
// data step that relabels the stored values.
type Keyring struct {
	env     string
	current string
	aeads   map[string]cipher.AEAD
	legacy  map[string]string
}

// NewKeyring builds the ring for one purpose (which separates the derived
// keys of different uses of the same master key) from master keys, current
// first; env names the variable they come from in errors. Empty entries are
// ignored; at least one key is required. Its ids are unsalted: use
// NewSaltedKeyring wherever the install's salt is known.
func NewKeyring(env, purpose string, masters ...string) (*Keyring, error) {
	return NewSaltedKeyring(env, purpose, nil, masters...)
}

// NewSaltedKeyring is NewKeyring with master key ids keyed by salt (the
// install's own, kept in the database). With a nil salt the ids are the
// unsalted ones of earlier releases.
func NewSaltedKeyring(env, purpose string, salt []byte, masters ...string) (*Keyring, error) {
	r := &Keyring{env: env, aeads: map[string]cipher.AEAD{}, legacy: map[string]string{}}
	sealInfo, idInfo := "platform/"+purpose+"/seal/v1", "platform/"+purpose+"/master-key-id/v1"
	for i, m := range masters {
		m = strings.TrimSpace(m)
		if m == "" {
			continue
		}
		key, err := hkdf.Key(sha256.New, []byte(m), nil, sealInfo, 32)
		if err != nil {
			return nil, fmt.Errorf("%s: derive key %d: %w", env, i+1, err)
		}
		legacyBytes, err := hkdf.Key(sha256.New, []byte(m), nil, idInfo, 8)
		if err != nil {
			return nil, fmt.Errorf("%s: derive id %d: %w", env, i+1, err)
		}
		idBytes := legacyBytes
		if len(salt) > 0 {
			if idBytes, err = hkdf.Key(sha256.New, []byte(m), salt, idInfo, 8); err != nil {
				return nil, fmt.Errorf("%s: derive id %d: %w", env, i+1, err)
			}
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, fmt.Errorf("%s: key %d: %w", env, i+1, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("%s: key %d: %w", env, i+1, err)
		}
		id := "mk-" + hex.EncodeToString(idBytes)
		if r.current == "" {
			r.current = id
		}
		r.aeads[id] = aead
		if legacyID := "mk-" + hex.EncodeToString(legacyBytes); legacyID != id {
			r.aeads[legacyID] = aead
			r.legacy[legacyID] = id
		}
	}
	if r.current == "" {
		return nil, fmt.Errorf("%s: no master key configured", env)
	}
	return r, nil
}

// LegacyIDs maps each configured master key's unsalted id to its salted
// id (empty for a ring without a salt).
func (r *Keyring) LegacyIDs() map[string]string {
	out := make(map[string]string, len(r.legacy))
	for k, v := range r.legacy {
		out[k] = v
	}
	return out
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
		return nil, errors.New("open sealed value: bad nonce")
	}
	pt, err := aead.Open(nil, nonce, sealed, aad)
	if err != nil {
		return nil, errors.New("open sealed value: authentication failed")
	}
	return pt, nil
}

// textPrefix starts every sealed text value: "sealed:v1:<master key id>:"
// then base64url(nonce || ciphertext).
const textPrefix = "sealed:v1:"

// SealText seals a text value for a text column, bound to aad (the row it
// belongs to, so a sealed value cannot be moved to another row).
func (r *Keyring) SealText(plaintext, aad string) (string, error) {
	ct, nonce, id, err := r.Seal([]byte(plaintext), []byte(aad))
	if err != nil {
		return "", err
	}
	return textPrefix + id + ":" + base64.RawURLEncoding.EncodeToString(append(nonce, ct...)), nil
}

// OpenText opens what SealText produced. A value without the sealed prefix
// was stored before encryption at rest and is returned as it is.
func (r *Keyring) OpenText(stored, aad string) (string, error) {
	rest, ok := strings.CutPrefix(stored, textPrefix)
	if !ok {
		return stored, nil
	}
	id, enc, ok := strings.Cut(rest, ":")
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	aead := r.aeads[id]
	if !ok || err != nil || aead == nil || len(raw) < aead.NonceSize() {
		if aead == nil && ok {
			return "", ErrUnknownMasterKey
		}
		return "", errors.New("open sealed value: malformed")
	}
	pt, err := r.Open(id, raw[aead.NonceSize():], raw[:aead.NonceSize()], []byte(aad))
	if err != nil {
		return "", err
	}
	return string(pt), nil
}
