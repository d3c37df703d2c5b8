package sign

import (
	"crypto/ed25519"
	"errors"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/sign"
)

// verifyRequest is the body of POST /verify.
type verifyRequest struct {
	Payload   payloadObject `json:"payload" required:"true"`
	Signature *string       `json:"signature" required:"true" maxLength:"1000" description:"<keyId>.<base64url signature> as /sign answered it"`
	canon     []byte
}

// Validate checks both fields at once (one 422 names every problem) and
// keeps the canonical payload.
func (req *verifyRequest) Validate() error {
	canon, perr := payloadOf(req.Payload.RawMessage)
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
	req.canon = canon
	return v.Err()
}

// verify checks the signature over the canonical JSON of payload with the
// published key it names, active or retired. A malformed, tampered or
// unknown signature is valid: false (200), never an error; the answer holds
// digests only, so /verify can never hand out a signature.
func (h *Handlers) verify(c *fiber.Ctx, req *verifyRequest) error {
	canon := req.canon
	out := schemas.VerifyResult{Expected: Digest(canon)}
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
