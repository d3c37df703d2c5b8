package build

import (
	"crypto/rand"
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/build"
	"github.com/fintech/platform/storage/postgres"
)

// partnerKeys finds a partner key (auth.PartnerKeys: qb_pk_ and 22 to 122
// characters of [A-Za-z0-9_-]; minted with 256 random bits) by its SHA-256.
func partnerKeys(st Store) auth.KeyLookup[build.Key] {
	return auth.KeyLookup[build.Key]{Kind: auth.PartnerKeys, ByHash: st.KeyByHash,
		Stored: func(k build.Key) []byte { return k.Hash }}
}

func keyView(k build.Key) schemas.PartnerKey {
	out := schemas.PartnerKey{ID: k.ID, CreatedAt: rfc3339(k.CreatedAt)}
	if k.RevokedAt != nil {
		s := rfc3339(*k.RevokedAt)
		out.RevokedAt = &s
	}
	return out
}

// errKeyLimit answers a mint beyond schemas.PartnerKeysPerUser active keys,
// as the spec answers a merchant key beyond 3.
var errKeyLimit = apierr.New(http.StatusTooManyRequests, schemas.CodeKeyLimitReached,
	"you already hold 3 active partner keys; revoke one first")

// createKey mints a partner key → 201 { id, key, createdAt }. The plaintext
// appears only in this answer; the store keeps its SHA-256.
func (h *Handlers) createKey(c *fiber.Ctx, _ *server.NoRequest) error {
	key, hash, err := auth.PartnerKeys.Mint(rand.Reader)
	if err != nil {
		return err
	}
	k := build.Key{ID: schemas.NewID(), EmployerID: caller(c), CreatedAt: h.now().UTC()}
	var ticket *ratelimit.Ticket
	if h.cfg.Budgets != nil {
		if ticket, err = h.cfg.Budgets.Take(c, schemas.BudgetPartnerKeyMint, k.EmployerID); err != nil {
			return err
		}
	}
	err = h.store.CreateKey(c.UserContext(), k, hash, schemas.PartnerKeysPerUser)
	if err != nil {
		// Only a key minted spends the budget.
		ticket.Refund(c.UserContext())
	}
	if errors.Is(err, build.ErrKeyLimit) {
		return errKeyLimit
	}
	if err != nil {
		return err
	}
	out := keyView(k)
	out.Key = key
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(http.StatusCreated).JSON(out)
}

// listKeys answers the caller's keys without their plaintext.
func (h *Handlers) listKeys(c *fiber.Ctx, _ *server.NoRequest) error {
	ks, err := h.store.ListKeys(c.UserContext(), caller(c))
	if err != nil {
		return err
	}
	items := make([]schemas.PartnerKey, len(ks))
	for i, k := range ks {
		items[i] = keyView(k)
	}
	return c.JSON(schemas.PartnerKeys{Items: items})
}

// revokeKey revokes one of the caller's keys → 200 { id, createdAt,
// revokedAt }; the key answers 401 key_invalid from then on. Another
// employer's or an unknown key → 404.
func (h *Handlers) revokeKey(c *fiber.Ctx, req *idPath) error {
	k, err := h.store.RevokeKey(c.UserContext(), req.id(), caller(c), h.now().UTC())
	if errors.Is(err, postgres.ErrNotFound) {
		return apierr.NotFound("no such partner key of yours")
	}
	if err != nil {
		return err
	}
	return c.JSON(keyView(k))
}
