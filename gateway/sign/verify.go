package sign

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/bind"
	store "github.com/fintech/platform/storage/sign"
)

type verifyRequest struct {
	Payload   json.RawMessage `json:"payload"`
	Signature *string         `json:"signature"`
}

// verifyResult is the answer to POST /verify (decisions.md, Signing):
// expected is the hex SHA-256 of the canonical payload sent now, provided
// that of the payload recorded when the signature was made (null when the
// signature was not made here).
type verifyResult struct {
	Valid    bool    `json:"valid"`
	Expected string  `json:"expected"`
	Provided *string `json:"provided"`
	KeyID    *string `json:"keyId"`
}

// verify checks the signature over the canonical JSON of payload with the
// published key it names, active or retired. A malformed, tampered or
// unknown signature is valid: false (200), never an error; the answer holds
// digests only, so /verify can never hand out a signature.
func (h *Handlers) verify(c *fiber.Ctx) error {
	var req verifyRequest
	if err := bind.JSON(c, &req); err != nil {
		return err
	}
	canon, perr := payloadOf(req.Payload)
	var v bind.Validator
	switch {
	case req.Signature == nil:
		v.Fail("signature", "is required")
	case !utf8.ValidString(*req.Signature) || len(*req.Signature) > 1_000:
		v.Fail("signature", "must be a signature string <keyId>.<base64url>")
	}
	var ae *apierr.Error
	if errors.As(perr, &ae) {
		for f, r := range ae.Fields {
			v.Fail(f, r)
		}
	} else if perr != nil {
		return perr
	}
	if err := v.Err(); err != nil {
		return err
	}
	out := verifyResult{Expected: Digest(canon)}
	ctx := c.UserContext()
	sigText := *req.Signature
	keyID, sig, ok := ParseSignature(sigText)
	if !ok {
		return c.JSON(out)
	}
	out.KeyID = &keyID
	if d, err := h.store.SignatureDigest(ctx, sigText); err == nil {
		out.Provided = &d
	} else if !store.IsNotFound(err) {
		return err
	}
	k, err := h.store.Key(ctx, keyID)
	switch {
	case store.IsNotFound(err):
		return c.JSON(out)
	case err != nil:
		return err
	}
	out.Valid = ed25519.Verify(ed25519.PublicKey(k.PublicKey), canon, sig)
	return c.JSON(out)
}
