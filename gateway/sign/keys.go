package sign

import (
	"encoding/base64"
	"errors"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/sign"
)

// keyPath is the request of GET /keys/:keyId.
type keyPath struct {
	KeyID string `path:"keyId" json:"-" description:"the key id a signature names (before the dot)"`
}

// viewOf is the published form of a key.
func viewOf(k store.KeyRow) schemas.SigningKey {
	x := base64.RawURLEncoding.EncodeToString(k.PublicKey)
	v := schemas.SigningKey{KeyID: k.ID, Algo: Algo, PublicKey: x, Status: k.Status, CreatedAt: k.CreatedAt.UTC(),
		JWK: schemas.JWK{Kty: "OKP", Crv: "Ed25519", X: x, Kid: k.ID, Alg: "EdDSA", Use: "sig"}}
	if k.RetiredAt != nil {
		t := k.RetiredAt.UTC()
		v.RetiredAt = &t
	}
	return v
}

// getKey publishes one public key, active or retired; no auth.
func (h *Handlers) getKey(c *fiber.Ctx, req *keyPath) error {
	id := req.KeyID
	if !keyIDPattern.MatchString(id) {
		return errKeyNotFound
	}
	k, err := h.store.Key(c.UserContext(), id)
	if store.IsNotFound(err) {
		return errKeyNotFound
	}
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "public, max-age=60")
	return c.JSON(viewOf(k))
}

// listKeys answers the caller's keys, newest first.
func (h *Handlers) listKeys(c *fiber.Ctx, _ *server.NoRequest) error {
	keys, err := h.store.Keys(c.UserContext(), caller(c))
	if err != nil {
		return err
	}
	items := make([]schemas.SigningKey, len(keys))
	for i, k := range keys {
		items[i] = viewOf(k)
	}
	return c.JSON(schemas.SigningKeys{Items: items, Total: len(items)})
}

// rotate retires the caller's active key (it stays published, so its
// signatures stay verifiable) and answers 201 with the new active key.
func (h *Handlers) rotate(c *fiber.Ctx, _ *server.NoRequest) error {
	user := caller(c)
	now := h.now().UTC().Truncate(time.Microsecond)
	var k store.KeyRow
	var retired string
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if k, err = h.newKey(user, now); err != nil {
			return err
		}
		if retired, err = h.store.Rotate(c.UserContext(), k); !errors.Is(err, store.ErrRotateRace) {
			break
		}
	}
	if err != nil {
		return err
	}
	var prev *string
	if retired != "" {
		prev = &retired
	}
	return c.Status(http.StatusCreated).JSON(schemas.RotatedSigningKey{SigningKey: viewOf(k), PreviousKeyID: prev})
}
