package e2e

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
	"github.com/gowebpki/jcs"
	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/e2e/harness"
)

type signResult struct {
	Payload   json.RawMessage `json:"payload"`
	Signature string          `json:"signature"`
	Algo      string          `json:"algo"`
	KeyID     string          `json:"keyId"`
	CreatedAt string          `json:"createdAt"`
}

type verifyResult struct {
	Valid    bool    `json:"valid"`
	Expected string  `json:"expected"`
	Provided *string `json:"provided"`
}

func signPayload(t *testing.T, p *harness.Platform, token, payload string) signResult {
	t.Helper()
	r := p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/sign/sign", Token: token,
		Body: `{"payload":` + payload + `}`})
	if r.Status != http.StatusCreated {
		t.Fatalf("sign: %d %s", r.Status, r.Body)
	}
	var out signResult
	r.Decode(t, &out)
	return out
}

func verifySignature(t *testing.T, p *harness.Platform, payload, signature string) verifyResult {
	t.Helper()
	sig, _ := json.Marshal(signature)
	r := p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/sign/verify",
		Body: `{"payload":` + payload + `,"signature":` + string(sig) + `}`})
	if r.Status != http.StatusOK {
		t.Fatalf("verify: %d %s", r.Status, r.Body)
	}
	if bytes.Contains(r.Body, []byte(`"signature"`)) {
		t.Fatalf("verify returned a signature: %s", r.Body)
	}
	var out verifyResult
	r.Decode(t, &out)
	return out
}

// offlineVerify checks a signature the way a partner would, with no platform
// code: the JWK is parsed by go-jose, the payload canonicalized by an
// RFC 8785 library, the signature checked with crypto/ed25519.
func offlineVerify(t *testing.T, p *harness.Platform, payload, signature string) bool {
	t.Helper()
	keyID, enc, ok := strings.Cut(signature, ".")
	if !ok {
		t.Fatalf("signature %q", signature)
	}
	r := p.Get(t, "/api/sign/keys/"+keyID, "")
	if r.Status != http.StatusOK {
		t.Fatalf("key: %d %s", r.Status, r.Body)
	}
	var key struct {
		JWK json.RawMessage `json:"jwk"`
	}
	r.Decode(t, &key)
	var jwk jose.JSONWebKey
	if err := jwk.UnmarshalJSON(key.JWK); err != nil {
		t.Fatalf("jwk %s: %v", key.JWK, err)
	}
	pub, ok := jwk.Key.(ed25519.PublicKey)
	if !ok || !jwk.Valid() || !jwk.IsPublic() || jwk.KeyID != keyID {
		t.Fatalf("jwk is not an Ed25519 public key: %s", key.JWK)
	}
	sig, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || len(sig) != ed25519.SignatureSize {
		t.Fatalf("signature part %q: %v", enc, err)
	}
	canon, err := jcs.Transform([]byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	return ed25519.Verify(pub, canon, sig)
}

func sha256Hex(t *testing.T, payload string) string {
	t.Helper()
	canon, err := jcs.Transform([]byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

// TestSignVerifyOffline signs a payload, fetches the public key as a JWK and
// verifies offline; then checks /verify on the original, a re-serialised
// and a tampered payload, and tampered, unknown and malformed signatures.
func TestSignVerifyOffline(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "sign")
	payload := `{"to":"bob","amount":10.50,"memo":"café <&>","nested":{"b":[1,2,{"z":null,"a":true}],"a":"x"}}`
	res := signPayload(t, p, u.Token, payload)
	if res.Algo != "Ed25519" || !strings.HasPrefix(res.Signature, res.KeyID+".") || len(res.Signature) != len(res.KeyID)+1+86 {
		t.Fatalf("sign result %+v", res)
	}
	want, _ := jcs.Transform([]byte(payload))
	if !bytes.Equal(res.Payload, want) || !strings.HasSuffix(res.CreatedAt, "Z") {
		t.Fatalf("payload %s createdAt %s", res.Payload, res.CreatedAt)
	}
	if !offlineVerify(t, p, payload, res.Signature) {
		t.Fatal("offline verification failed")
	}
	// The same user keeps one key.
	if again := signPayload(t, p, u.Token, `{"n":1}`); again.KeyID != res.KeyID {
		t.Fatalf("a second key: %s %s", again.KeyID, res.KeyID)
	}

	digest := sha256Hex(t, payload)
	v := verifySignature(t, p, payload, res.Signature)
	if !v.Valid || v.Expected != digest || v.Provided == nil || *v.Provided != digest {
		t.Fatalf("verify original: %+v", v)
	}
	reserialised := "{ \"memo\": \"caf\\u00e9 <&>\", \"nested\": {\"a\":\"x\",\"b\":[1.0,2,{\"a\":true,\"z\":null}]},\n \"amount\": 10.5, \"to\": \"bob\" }"
	if v := verifySignature(t, p, reserialised, res.Signature); !v.Valid || v.Expected != digest {
		t.Fatalf("verify re-serialised: %+v", v)
	}
	tampered := strings.Replace(payload, "10.50", "1050", 1)
	v = verifySignature(t, p, tampered, res.Signature)
	if v.Valid || v.Expected == digest || v.Provided == nil || *v.Provided != digest {
		t.Fatalf("verify tampered payload: %+v", v)
	}
	if offlineVerify(t, p, tampered, res.Signature) {
		t.Fatal("offline verification accepted a tampered payload")
	}
	// Flip one bit of the signature: invalid, and unknown to the records.
	keyID, enc, _ := strings.Cut(res.Signature, ".")
	raw, _ := base64.RawURLEncoding.DecodeString(enc)
	raw[10] ^= 1
	forged := keyID + "." + base64.RawURLEncoding.EncodeToString(raw)
	if v := verifySignature(t, p, payload, forged); v.Valid || v.Provided != nil || v.Expected != digest {
		t.Fatalf("verify forged signature: %+v", v)
	}
	for _, bad := range []string{"", "garbage", "nokey." + enc, keyID + ".short", keyID + "." + enc + "==", "../x." + enc} {
		if v := verifySignature(t, p, payload, bad); v.Valid || v.Provided != nil {
			t.Fatalf("verify %q: %+v", bad, v)
		}
	}
	// Another user's signature of the same payload does not pass as this key's.
	other := signPayload(t, p, p.Register(t, "sign-other").Token, payload)
	_, otherEnc, _ := strings.Cut(other.Signature, ".")
	if v := verifySignature(t, p, payload, keyID+"."+otherEnc); v.Valid {
		t.Fatalf("another key's signature verified: %+v", v)
	}

	// Bad input: never a 500.
	cases := []struct {
		path, token, body string
		status            int
	}{
		{"/api/sign/sign", u.Token, `{"payload":[1,2]}`, 422},
		{"/api/sign/sign", u.Token, `{"payload":"text"}`, 422},
		{"/api/sign/sign", u.Token, `{}`, 422},
		{"/api/sign/sign", u.Token, `{"payload":{"a":1,"a":2}}`, 422},
		{"/api/sign/sign", u.Token, `{"payload":{"a":"\u0000"}}`, 422},
		{"/api/sign/sign", u.Token, `{"payload":{"a":1e999}}`, 422},
		{"/api/sign/sign", u.Token, `[1]`, 400},
		{"/api/sign/sign", u.Token, `{"payload":`, 400},
		{"/api/sign/sign", "", `{"payload":{}}`, 401},
		{"/api/sign/verify", "", `{"payload":{}}`, 422},
		{"/api/sign/verify", "", `{"payload":{},"signature":5}`, 422},
		{"/api/sign/verify", "", `{"signature":"x.y"}`, 422},
		{"/api/sign/verify", "", `{"payload":[],"signature":"x.y"}`, 422},
	}
	for _, c := range cases {
		r := p.Do(t, harness.Request{Method: http.MethodPost, Path: c.path, Token: c.token, Body: c.body})
		if r.Status != c.status {
			t.Fatalf("%s %s: %d %s", c.path, c.body, r.Status, r.Body)
		}
	}
	for _, id := range []string{"2NoSuchKey000000000000000000", "..%2F", "a.b"} {
		if r := p.Get(t, "/api/sign/keys/"+id, ""); r.Status != http.StatusNotFound || r.JSON(t)["error"] != "not_found" {
			t.Fatalf("key %s: %d %s", id, r.Status, r.Body)
		}
	}
	if r := p.Get(t, "/api/sign/keys/a%00b", ""); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("key with NUL: %d %s", r.Status, r.Body)
	}
}

// TestSignKeyRotation rotates a user's key: new signatures use the new key,
// the old key stays published (retired) and old signatures still verify,
// online and offline.
func TestSignKeyRotation(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "sign-rotate")
	payload := `{"doc":"v1"}`
	old := signPayload(t, p, u.Token, payload)
	r := p.Post(t, "/api/sign/keys/rotate", u.Token, map[string]any{})
	if r.Status != http.StatusCreated {
		t.Fatalf("rotate: %d %s", r.Status, r.Body)
	}
	m := r.JSON(t)
	if m["previousKeyId"] != old.KeyID || m["keyId"] == old.KeyID || m["status"] != "active" {
		t.Fatalf("rotate: %s", r.Body)
	}
	fresh := signPayload(t, p, u.Token, payload)
	if fresh.KeyID != m["keyId"] || fresh.Signature == old.Signature {
		t.Fatalf("after rotation: %+v", fresh)
	}
	for _, s := range []string{old.Signature, fresh.Signature} {
		if v := verifySignature(t, p, payload, s); !v.Valid || v.Provided == nil {
			t.Fatalf("verify %s: %+v", s, v)
		}
		if !offlineVerify(t, p, payload, s) {
			t.Fatalf("offline %s", s)
		}
	}
	r = p.Get(t, "/api/sign/keys/"+old.KeyID, "")
	if r.Status != http.StatusOK || r.JSON(t)["status"] != "retired" || r.JSON(t)["retiredAt"] == nil {
		t.Fatalf("old key: %d %s", r.Status, r.Body)
	}
	r = p.Get(t, "/api/sign/keys", u.Token)
	if items, _ := r.JSON(t)["items"].([]any); r.Status != http.StatusOK || len(items) != 2 {
		t.Fatalf("keys: %d %s", r.Status, r.Body)
	}
}

// TestSignMasterKeyRotation runs its own platform: a key sealed under the
// first master key still signs after SIGNING_MASTER_KEY becomes "new,old"
// (and is sealed again under the new one), and then with only the new one.
// The master key never reaches the database or the logs.
func TestSignMasterKeyRotation(t *testing.T) {
	oldMaster := strings.Repeat("0123456789abcdef", 4)
	newMaster := strings.Repeat("fedcba9876543210", 4)
	p := harness.Start(t, harness.Options{Env: map[string]string{"SIGNING_MASTER_KEY": oldMaster}})
	u := p.Register(t, "sign-master")
	first := signPayload(t, p, u.Token, `{"n":1}`)

	p.Stop()
	p.Env = append(p.Env, "SIGNING_MASTER_KEY="+newMaster+","+oldMaster)
	p.Restart()
	second := signPayload(t, p, u.Token, `{"n":2}`)
	if second.KeyID != first.KeyID || !offlineVerify(t, p, `{"n":2}`, second.Signature) {
		t.Fatalf("after master rotation: %+v", second)
	}

	p.Stop()
	p.Env = append(p.Env, "SIGNING_MASTER_KEY="+newMaster)
	p.Restart()
	third := signPayload(t, p, u.Token, `{"n":3}`)
	if third.KeyID != first.KeyID || !offlineVerify(t, p, `{"n":3}`, third.Signature) {
		t.Fatalf("with the new master only: %+v", third)
	}
	if v := verifySignature(t, p, `{"n":1}`, first.Signature); !v.Valid {
		t.Fatalf("old signature: %+v", v)
	}

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, p.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var dump string
	if err := conn.QueryRow(ctx, `SELECT coalesce(string_agg(k::text, ''), '') FROM sign_keys k`).Scan(&dump); err != nil {
		t.Fatal(err)
	}
	var sealedLen, nonceLen int
	_ = conn.QueryRow(ctx, `SELECT length(sealed_seed), length(nonce) FROM sign_keys LIMIT 1`).Scan(&sealedLen, &nonceLen)
	for _, m := range []string{oldMaster, newMaster, hex.EncodeToString([]byte(oldMaster)), hex.EncodeToString([]byte(newMaster))} {
		if strings.Contains(dump, m) || strings.Contains(p.Logs(), m) {
			t.Fatal("a master key reached the database or the logs")
		}
	}
	if sealedLen != 32+16 || nonceLen != 12 {
		t.Fatalf("sealed seed %d bytes, nonce %d", sealedLen, nonceLen)
	}
	// The generated secret file is not used when the variable is set.
	if b, err := os.ReadFile(filepath.Join(p.DataDir, "secrets", "signing_master_key")); err == nil && strings.Contains(string(b), newMaster) {
		t.Fatal("the master key was written to the data directory")
	}
}
