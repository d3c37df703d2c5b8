package sign

import (
	"encoding/base64"
	"errors"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	store "github.com/fintech/platform/storage/sign"
)

// JWK is an RFC 8037 public key: kty OKP, crv Ed25519, x the base64url
// (unpadded) public key.
type JWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Kid string `json:"kid"`
	Alg string `json:"alg"`
	Use string `json:"use"`
}

// keyView is the published form of a key.
type keyView struct {
	KeyID     string     `json:"keyId"`
	Algo      string     `json:"algo"`
	PublicKey string     `json:"publicKey"`
	Status    string     `json:"status"`
	CreatedAt time.Time  `json:"createdAt"`
	RetiredAt *time.Time `json:"retiredAt"`
	JWK       JWK        `json:"jwk"`
}

func viewOf(k store.KeyRow) keyView {
	x := base64.RawURLEncoding.EncodeToString(k.PublicKey)
	v := keyView{KeyID: k.ID, Algo: Algo, PublicKey: x, Status: k.Status, CreatedAt: k.CreatedAt.UTC(),
		JWK: JWK{Kty: "OKP", Crv: "Ed25519", X: x, Kid: k.ID, Alg: "EdDSA", Use: "sig"}}
	if k.RetiredAt != nil {
		t := k.RetiredAt.UTC()
		v.RetiredAt = &t
	}
	return v
}

// getKey publishes one public key, active or retired; no auth.
func (h *Handlers) getKey(c *fiber.Ctx) error {
	id := c.Params("keyId")
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
func (h *Handlers) listKeys(c *fiber.Ctx) error {
	keys, err := h.store.Keys(c.UserContext(), caller(c))
	if err != nil {
		return err
	}
	items := make([]keyView, len(keys))
	for i, k := range keys {
		items[i] = viewOf(k)
	}
	return c.JSON(fiber.Map{"items": items, "total": len(items), "nextCursor": nil})
}

// rotate retires the caller's active key (it stays published, so its
// signatures stay verifiable) and answers 201 with the new active key.
func (h *Handlers) rotate(c *fiber.Ctx) error {
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
	return c.Status(http.StatusCreated).JSON(struct {
		keyView
		PreviousKeyID *string `json:"previousKeyId"`
	}{viewOf(k), prev})
}
