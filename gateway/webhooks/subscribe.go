package webhooks

import (
	"errors"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
	store "github.com/fintech/platform/storage/webhooks"
)

type subscribeRequest struct {
	URL    string   `json:"url"`
	Secret string   `json:"secret"`
	Events []string `json:"events"`
}

// subscriptionJSON is a subscription as returned: never the secret. Events
// null means all events.
type subscriptionJSON struct {
	ID        string    `json:"id"`
	URL       string    `json:"url"`
	Events    []string  `json:"events"`
	CreatedAt time.Time `json:"createdAt"`
}

func toJSON(s store.Subscription) subscriptionJSON {
	return subscriptionJSON{ID: s.ID, URL: s.URL, Events: s.Events, CreatedAt: s.CreatedAt.UTC()}
}

// bindSubscription reads and validates a subscription request for the
// caller.
func (h *Handlers) bindSubscription(c *fiber.Ctx) (store.Subscription, error) {
	var req subscribeRequest
	if err := bind.JSON(c, &req); err != nil {
		return store.Subscription{}, err
	}
	var v bind.Validator
	u := checkURL(c.UserContext(), &v, h.cfg.Resolver, req.URL, h.cfg.AllowPrivate)
	checkSecret(&v, req.Secret)
	events := checkEvents(&v, req.Events)
	if err := v.Err(); err != nil {
		return store.Subscription{}, err
	}
	p, _ := auth.User(c)
	secret, err := h.cfg.Vault.SealText(req.Secret, store.SecretAAD(p.UserID))
	if err != nil {
		return store.Subscription{}, err
	}
	return store.Subscription{ID: schemas.NewID(), UserID: p.UserID, URL: u, Secret: secret,
		Events: events, CreatedAt: h.cfg.Now().UTC()}, nil
}

// savePrimary serves POST /me/webhook: 201 for the first endpoint, 200 when
// it replaces the existing one (same id; url, secret and events replaced).
func (h *Handlers) savePrimary(c *fiber.Ctx) error {
	sub, err := h.bindSubscription(c)
	if err != nil {
		return err
	}
	saved, created, err := h.cfg.Store.SavePrimary(c.UserContext(), sub)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return c.Status(status).JSON(toJSON(saved))
}

// addSubscription serves POST /webhook-subs: a further endpoint, 201.
func (h *Handlers) addSubscription(c *fiber.Ctx) error {
	sub, err := h.bindSubscription(c)
	if err != nil {
		return err
	}
	saved, err := h.cfg.Store.Add(c.UserContext(), sub, MaxSubscriptions)
	if errors.Is(err, store.ErrLimit) {
		return apierr.New(http.StatusConflict, schemas.CodeWebhookLimitReached,
			"a user may hold at most 10 webhook subscriptions")
	}
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(toJSON(saved))
}

type rotateRequest struct {
	Secret string `json:"secret"`
	// ID names a subscription made with /webhook-subs; empty means the
	// primary endpoint of /me/webhook.
	ID string `json:"id"`
}

// rotate serves PATCH /me/webhook: the new secret signs every attempt from
// now on, retries of earlier events included.
func (h *Handlers) rotate(c *fiber.Ctx) error {
	var req rotateRequest
	if err := bind.JSON(c, &req); err != nil {
		return err
	}
	var v bind.Validator
	checkSecret(&v, req.Secret)
	v.MaxLen("id", req.ID, 64)
	if err := v.Err(); err != nil {
		return err
	}
	p, _ := auth.User(c)
	secret, err := h.cfg.Vault.SealText(req.Secret, store.SecretAAD(p.UserID))
	if err != nil {
		return err
	}
	sub, err := h.cfg.Store.RotateSecret(c.UserContext(), p.UserID, req.ID, secret, h.cfg.Now().UTC())
	if errors.Is(err, postgres.ErrNotFound) {
		return apierr.NotFound("no such webhook subscription; create one with POST /api/fiat/me/webhook")
	}
	if err != nil {
		return err
	}
	return c.JSON(toJSON(sub))
}
