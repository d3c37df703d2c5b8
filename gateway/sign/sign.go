package sign

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/swaggest/jsonschema-go"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/sign"
)

// payloadObject is a JSON object as sent, kept raw so that it is
// canonicalized from the client's bytes.
type payloadObject struct{ json.RawMessage }

// PrepareJSONSchema describes the payload as the object it must be.
func (payloadObject) PrepareJSONSchema(s *jsonschema.Schema) error {
	anyField := true
	s.WithType(jsonschema.Object.Type()).WithAdditionalProperties(jsonschema.SchemaOrBool{TypeBoolean: &anyField}).
		WithDescription("any JSON object; it is signed in its RFC 8785 canonical form (numbers must fit an IEEE-754 double, keys must be unique)")
	s.Properties = nil
	return nil
}

// signRequest is the body of POST /sign.
type signRequest struct {
	Payload payloadObject `json:"payload" required:"true"`
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
func (h *Handlers) sign(c *fiber.Ctx, req *signRequest) error {
	canon, err := payloadOf(req.Payload.RawMessage)
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
	// Payloads are kept schemas.SignRetention within a per-user budget, so
	// one account cannot fill the table.
	oldest, err := h.store.RecordSignatureWithin(ctx, store.SignatureRow{ID: h.newID(), KeyID: k.ID, UserID: user,
		Signature: sig, PayloadDigest: Digest(canon), CanonicalPayload: canon, CreatedAt: now},
		now.Add(-schemas.SignRetention), schemas.SignPayloadBudgetBytes, schemas.SignPayloadBudgetCount)
	if errors.Is(err, store.ErrPayloadBudget) {
		retry := max(int64(oldest.Add(schemas.SignRetention).Sub(now).Seconds())+1, 1)
		c.Set(fiber.HeaderRetryAfter, strconv.FormatInt(retry, 10))
		return apierr.RateLimited().With(map[string]any{"budget": "sign-payloads",
			"limitBytes": schemas.SignPayloadBudgetBytes, "limitCount": schemas.SignPayloadBudgetCount})
	}
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusCreated, schemas.SignResult{Payload: canon, Signature: sig, Algo: Algo, KeyID: k.ID, CreatedAt: now})
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
