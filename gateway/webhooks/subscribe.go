package webhooks

import (
	"encoding/json"
	"time"

	"errors"
	"fmt"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/commands"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
	store "github.com/fintech/platform/storage/webhooks"
)

// subscribeRequest is the body of POST /me/webhook and POST /webhook-subs.
type subscribeRequest struct {
	URL    string   `json:"url" required:"true" format:"uri" maxLength:"2048" description:"absolute https URL whose host resolves only to public addresses (unless WEBHOOK_ALLOW_PRIVATE=1)"`
	Secret string   `json:"secret" minLength:"16" maxLength:"256" description:"signs every delivery; never returned. Left out: the server mints a whsec_ (Standard Webhooks) secret and returns it once, in this answer"`
	Events []string `json:"events" minItems:"1" description:"event types to receive; left out for every event about the caller"`
	// Password and Code re-authenticate the caller: a stolen token alone
	// cannot point the caller's events somewhere new.
	Password string `json:"password" required:"true" minLength:"1" maxLength:"128" description:"the caller's current password: a stolen token alone cannot add an endpoint; the owner is mailed a notice"`
	Code     string `json:"code,omitempty" maxLength:"32" description:"when two-factor is on: a current TOTP code or an unused recovery code"`
}

func toJSON(s store.Subscription) schemas.WebhookSubscription {
	return schemas.WebhookSubscription{ID: s.ID, URL: s.URL, Events: s.Events, CreatedAt: s.CreatedAt.UTC()}
}

// minted is the answer of a write that may have minted the secret: shown
// once, here.
func minted(s store.Subscription, secret string) schemas.WebhookSubscriptionMinted {
	return schemas.WebhookSubscriptionMinted{WebhookSubscription: toJSON(s), Secret: secret}
}

// sealSecret seals the caller's secret for storage, or mints one when the
// caller sent none; minted is then the clear secret to show once.
func (h *Handlers) sealSecret(userID, secret string) (sealed, minted string, err error) {
	if secret == "" {
		if secret, err = schemas.NewWebhookSecret(); err != nil {
			return "", "", err
		}
		minted = secret
	}
	sealed, err = h.vault.SealText(secret, store.SecretAAD(userID))
	return sealed, minted, err
}

// bindSubscription validates a subscription request for the caller (the
// host of the URL is resolved, so it takes the request's context). A
// missing secret is minted and returned in clear beside the row.
func (h *Handlers) bindSubscription(c *fiber.Ctx, req *subscribeRequest) (store.Subscription, string, error) {
	var v bind.Validator
	u := checkURL(c.UserContext(), &v, h.cfg.Resolver, req.URL, h.cfg.AllowPrivate)
	if req.Secret != "" {
		checkSecret(&v, req.Secret)
	}
	events := checkEvents(&v, req.Events)
	if err := v.Err(); err != nil {
		return store.Subscription{}, "", err
	}
	p, _ := auth.User(c)
	if err := h.cfg.Reauth.Reauthenticate(c, p.UserID, req.Password, req.Code); err != nil {
		return store.Subscription{}, "", err
	}
	all, err := h.allEvents(c, p)
	if err != nil {
		return store.Subscription{}, "", err
	}
	secret, clear, err := h.sealSecret(p.UserID, req.Secret)
	if err != nil {
		return store.Subscription{}, "", err
	}
	return store.Subscription{ID: schemas.NewID(), UserID: p.UserID, URL: u, Secret: secret,
		Events: events, AllEvents: all, CreatedAt: h.now().UTC()}, clear, nil
}

// allEvents decides whether what the caller makes now receives every event.
func (h *Handlers) allEvents(c *fiber.Ctx, p auth.Principal) (bool, error) {
	if h.cfg.AllEvents == nil {
		return false, nil
	}
	return h.cfg.AllEvents(c.UserContext(), p)
}

// notifyEndpoint mails the owner that events of theirs now go to url.
func (h *Handlers) notifyEndpoint(c *fiber.Ctx, userID, url string) {
	h.cfg.Reauth.Notify(c.UserContext(), userID, "a webhook endpoint now receives your account's events: "+url)
}

// savePrimary serves POST /me/webhook: 201 for the first endpoint, 200 when
// it replaces the existing one (same id; url, secret and events replaced).
func (h *Handlers) savePrimary(c *fiber.Ctx, req *subscribeRequest) error {
	sub, clear, err := h.bindSubscription(c, req)
	if err != nil {
		return err
	}
	// The primary endpoint counts against MaxSubscriptions like the others.
	saved, created, err := h.store.SavePrimaryWithin(c.UserContext(), sub, MaxSubscriptions)
	if errors.Is(err, store.ErrLimit) {
		return errSubscriptionLimit()
	}
	if err != nil {
		return err
	}
	h.notifyEndpoint(c, saved.UserID, saved.URL)
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return c.Status(status).JSON(minted(saved, clear))
}

func errSubscriptionLimit() error {
	return apierr.New(http.StatusConflict, schemas.CodeWebhookLimitReached,
		"a user may hold at most 10 webhook subscriptions, the one of /me/webhook included")
}

// commandAddSubscription is the command type of POST /webhook-subs's
// idempotency records.
const commandAddSubscription = "webhooks.subscription.add"

// addSubscription serves POST /webhook-subs: a further endpoint, 201. With
// an Idempotency-Key (scoped to the caller and this endpoint) a retry with
// the same body answers the first answer byte for byte with
// Idempotent-Replayed: true, and creates nothing; a different body is 409
// idempotency_key_reused. The recorded answer can hold a minted secret, so
// it is kept sealed, like the subscription's own secret.
func (h *Handlers) addSubscription(c *fiber.Ctx, req *subscribeRequest) error {
	sub, clear, err := h.bindSubscription(c, req)
	if err != nil {
		return err
	}
	body, err := json.Marshal(minted(sub, clear))
	if err != nil {
		return err
	}
	var idem *pipeline.Processed
	idemReq := commands.RequestIdempotency(c, sub.UserID, "POST /webhook-subs")
	aad := "webhook-subs-answer:" + sub.UserID
	if idemReq.Key != "" {
		sealedBody, err := h.vault.SealText(string(body), aad)
		if err != nil {
			return err
		}
		idem = &pipeline.Processed{CommandID: idemReq.CommandID(), CommandType: commandAddSubscription,
			RequestHash: idemReq.RequestHash, Status: http.StatusCreated, Body: []byte(sealedBody)}
	}
	_, prior, err := h.store.AddIdempotent(c.UserContext(), sub, MaxSubscriptions, idem)
	if errors.Is(err, store.ErrLimit) {
		return errSubscriptionLimit()
	}
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if prior == nil {
		h.notifyEndpoint(c, sub.UserID, sub.URL)
	}
	if prior != nil {
		if prior.RequestHash != idem.RequestHash {
			return apierr.IdempotencyReused()
		}
		opened, err := h.vault.OpenText(string(prior.Body), aad)
		if err != nil {
			return fmt.Errorf("open the recorded answer: %w", err)
		}
		c.Set(server.HeaderIdempotentReplayed, "true")
		body, status = []byte(opened), prior.Status
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	return c.Status(status).Send(body)
}

// rotateRequest is the body of PATCH /me/webhook.
type rotateRequest struct {
	Secret secretPatch `json:"secret"`
	// ID names a subscription made with /webhook-subs; empty means the
	// primary endpoint of /me/webhook.
	ID string `json:"id" maxLength:"64" description:"a subscription made with /webhook-subs; the primary endpoint when left out"`
	// ExpiresIn is the overlap in seconds (schemas.WebhookOverlapDefault
	// when left out).
	ExpiresIn *int64 `json:"expiresIn" minimum:"0" maximum:"172800" description:"seconds the previous secret keeps signing beside the new one: 86400 (24 h) when left out, at most 172800 (48 h); 0 stops it at once"`
}

// previousUntil is when the replaced secret stops signing (nil: at once).
func previousUntil(expiresIn *int64, now time.Time) *time.Time {
	n := int64(schemas.WebhookOverlapDefault)
	if expiresIn != nil {
		n = *expiresIn
	}
	if n <= 0 {
		return nil
	}
	t := now.Add(time.Duration(n) * time.Second)
	return &t
}

// BodyIsOptional: an empty PATCH mints a new secret.
func (*rotateRequest) BodyIsOptional() {}

// Validate checks the secret and the id.
func (req *rotateRequest) Validate() error {
	var v bind.Validator
	if req.Secret.problem != "" {
		v.Fail("secret", req.Secret.problem)
	} else if req.Secret.value != "" {
		checkSecret(&v, req.Secret.value)
	}
	v.MaxLen("id", req.ID, 64)
	return v.Err()
}

// rotate serves PATCH /me/webhook: the new secret signs every attempt from
// now on, retries of earlier events included.
func (h *Handlers) rotate(c *fiber.Ctx, req *rotateRequest) error {
	p, _ := auth.User(c)
	secret, clear, err := h.sealSecret(p.UserID, req.Secret.value)
	if err != nil {
		return err
	}
	now := h.now().UTC()
	until := previousUntil(req.ExpiresIn, now)
	sub, err := h.store.RotateSecret(c.UserContext(), p.UserID, req.ID, secret, until, now)
	if errors.Is(err, postgres.ErrNotFound) {
		return apierr.NotFound("no such webhook subscription; create one with POST /api/fiat/me/webhook")
	}
	if err != nil {
		return err
	}
	out := minted(sub, clear)
	out.PreviousSecretExpiresAt = until
	return c.JSON(out)
}
