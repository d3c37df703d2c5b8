package sign

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/bind"
	store "github.com/fintech/platform/storage/sign"
)

type signRequest struct {
	Payload json.RawMessage `json:"payload"`
}

// signResult is the answer to POST /sign (spec: Signing).
type signResult struct {
	Payload   json.RawMessage `json:"payload"`
	Signature string          `json:"signature"`
	Algo      string          `json:"algo"`
	KeyID     string          `json:"keyId"`
	CreatedAt time.Time       `json:"createdAt"`
}

// payloadOf canonicalizes the request's payload or reports it as a 422.
func payloadOf(raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, apierr.Validation(map[string]string{"payload": "is required"})
	}
	canon, err := Canonical(raw)
	if err != nil {
		return nil, apierr.Validation(map[string]string{"payload": err.Error()})
	}
	return canon, nil
}

// sign signs the canonical JSON of payload with the caller's key (created on
// first use), records the signing, and answers 201 with the canonical
// payload, the signature `<keyId>.<base64url sig>`, algo and createdAt.
func (h *Handlers) sign(c *fiber.Ctx) error {
	var req signRequest
	if err := bind.JSON(c, &req); err != nil {
		return err
	}
	canon, err := payloadOf(req.Payload)
	if err != nil {
		return err
	}
	ctx, user := c.UserContext(), caller(c)
	now := h.now().UTC().Truncate(time.Microsecond)
	k, err := h.activeKey(ctx, user, now)
	if err != nil {
		return err
	}
	priv, err := h.privateKey(ctx, k)
	if err != nil {
		return err
	}
	sig := FormatSignature(k.ID, ed25519.Sign(priv, canon))
	clear(priv)
	if err := h.store.RecordSignature(ctx, store.SignatureRow{ID: h.newID(), KeyID: k.ID, UserID: user,
		Signature: sig, PayloadDigest: Digest(canon), CanonicalPayload: canon, CreatedAt: now}); err != nil {
		return err
	}
	return writeJSON(c, http.StatusCreated, signResult{Payload: canon, Signature: sig, Algo: Algo, KeyID: k.ID, CreatedAt: now})
}

// writeJSON answers v without HTML escaping, so the canonical payload is
// returned byte for byte (RFC 8785 does not escape <, > and &).
func writeJSON(c *fiber.Ctx, status int, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	return c.Status(status).Send(bytes.TrimRight(buf.Bytes(), "\n"))
}
