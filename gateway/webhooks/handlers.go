package webhooks

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/pipeline"
	store "github.com/fintech/platform/storage/webhooks"
)

// Store is what the handlers need from the webhook repository.
type Store interface {
	SavePrimaryWithin(ctx context.Context, sub store.Subscription, max int) (store.Subscription, bool, error)
	AddIdempotent(ctx context.Context, sub store.Subscription, max int, idem *pipeline.Processed) (store.Subscription, *pipeline.Processed, error)
	RotateSecret(ctx context.Context, userID, id, secret string, previousUntil *time.Time, now time.Time) (store.Subscription, error)
	List(ctx context.Context, f store.Filter) ([]store.Delivery, error)
	Retry(ctx context.Context, id string, now time.Time) (store.Delivery, error)
	CreateStreamTicket(ctx context.Context, tokenHash, userID, sessionID string, expiresAt, now time.Time) error
	UseStreamTicket(ctx context.Context, tokenHash string, now time.Time) (string, string, error)

	ListSubscriptions(ctx context.Context, userID string, before schemas.Position, limit int) ([]store.Subscription, error)
	Subscription(ctx context.Context, userID, id string) (store.Subscription, error)
	Update(ctx context.Context, userID, id string, p store.Patch, now time.Time) (store.Subscription, error)
	Delete(ctx context.Context, userID, id string) error
	RetryOwned(ctx context.Context, subscriptionID, id string, now time.Time) (store.Delivery, error)
	QueueEvent(ctx context.Context, subscriptionID string, ev store.Event, now time.Time) (store.Delivery, error)
}

// Stream is the admin event stream source.
type Stream interface {
	Subscribe(lastID string, recent int) ([]Message, *Listener)
}

// Waker is told that a delivery was queued for now.
type Waker interface{ Wake() }

// Resolver resolves endpoint host names (net.DefaultResolver).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

var (
	_ Store  = (*store.Store)(nil)
	_ Stream = (*Hub)(nil)
)

// Reauther checks the fresh password (and two-factor code) of adding or
// moving an endpoint, and mails the owner a notice (identity.Handlers).
type Reauther interface {
	Reauthenticate(c *fiber.Ctx, userID, password, code string) error
	Notify(ctx context.Context, userID, what string)
}

// Config holds the handlers' options.
type Config struct {
	// Reauth checks the password of a write that adds or moves an endpoint
	// and mails the owner (required).
	Reauth Reauther
	// AllEvents decides whether a subscription the caller makes now
	// receives every event, not only the caller's (auth.Guard.AllEvents over
	// the fiat allowlist: an admin's login session, never an API key); nil
	// gives it to nobody.
	AllEvents func(ctx context.Context, p auth.Principal) (bool, error)
	// AllowPrivate lifts the https and public-address rules on endpoint
	// URLs (WEBHOOK_ALLOW_PRIVATE=1).
	AllowPrivate bool
	// Resolver resolves endpoint hosts. Default net.DefaultResolver.
	Resolver Resolver
	// Heartbeat is the interval of the stream's comment heartbeat. Default
	// 15 s.
	Heartbeat time.Duration
	// SessionCheck is how often an open stream checks that the login
	// session it was opened with is still live (not logged out, revoked or
	// expired); the stream ends at the first check that finds it ended.
	// Default 5 s.
	SessionCheck time.Duration
}

// setDefaults fills the options left out.
func (c *Config) setDefaults() {
	if c.Resolver == nil {
		c.Resolver = net.DefaultResolver
	}
	if c.Heartbeat == 0 {
		c.Heartbeat = 15 * time.Second
	}
	if c.SessionCheck == 0 {
		c.SessionCheck = 5 * time.Second
	}
}

// Validate reports every problem of the options.
func (c Config) Validate() error {
	var errs []error
	if c.Reauth == nil {
		errs = append(errs, errors.New("webhooks: Reauth is required"))
	}
	if c.Heartbeat < 0 {
		errs = append(errs, errors.New("webhooks: Heartbeat must not be negative"))
	}
	if c.SessionCheck < 0 {
		errs = append(errs, errors.New("webhooks: SessionCheck must not be negative"))
	}
	return errors.Join(errs...)
}

// MaxSubscriptions caps the subscriptions (the primary one included) a user
// may hold.
const MaxSubscriptions = 10

// Handlers serve the webhook routes.
type Handlers struct {
	store    Store
	audience Audience
	stream   Stream
	waker    Waker
	authn    *auth.Authenticator
	admin    fiber.Handler
	vault    Vault
	now      func() time.Time
	cfg      Config
	// streams counts each user's open /me/events/stream connections.
	streams *streamSlots
}

// NewHandlers checks the dependencies and builds the handlers. admin admits
// only fiat admins (verified e-mail on the allowlist): the delivery log,
// retries and the stream are theirs. vault seals signing secrets before
// they are stored. audience picks each user's events for their own stream.
func NewHandlers(store Store, stream Stream, audience Audience, waker Waker, authn *auth.Authenticator, admin fiber.Handler,
	vault Vault, now func() time.Time, cfg Config) (*Handlers, error) {
	if store == nil || stream == nil || audience == nil || waker == nil || authn == nil || admin == nil || vault == nil ||
		now == nil {
		return nil, errors.New("webhook handlers: nil dependency")
	}
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Handlers{store: store, audience: audience, stream: stream, waker: waker, authn: authn, admin: admin,
		vault: vault, now: now, cfg: cfg, streams: &streamSlots{open: map[string]int{}}}, nil
}

// fiatAdmin is the role of the admin routes.
const fiatAdmin = "fiat admin"

// Register mounts the routes under /api/fiat. Each operation is declared
// with its request and answer types (server.Op); they are documented in the
// fiat slice, whose prefix they share.
func (h *Handlers) Register(r server.Router) error {
	if err := h.registerCatalog(r); err != nil {
		return err
	}
	// Under /api/fiat, but an area of their own: a key needs webhooks:*.
	g := r.Group("/api/fiat").KeyArea("webhooks")
	user := h.authn.Require()
	admin := h.admin
	server.Post(g, "/me/webhook", server.Op[subscribeRequest]{
		Summary:     "Create or replace the caller's webhook endpoint",
		Description: "Sets the URL and the event types of the caller's webhook endpoint, replacing any before, and answers its signing secret. Needs the caller's `password` (and `code` when two-factor is on); the owner is mailed a notice. Only a fiat admin's login session (with two-factor in production), never an API key, makes an endpoint that receives every user's events; others receive the events about the caller.",
		Class:       ratelimit.Write, Handle: h.savePrimary,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "the caller's first endpoint", schemas.WebhookSubscriptionMinted{}),
			server.Answers(http.StatusOK, "the endpoint replaced: same id and createdAt, new url, secret and events", schemas.WebhookSubscriptionMinted{}),
			server.Fails(http.StatusConflict, "webhook_limit_reached: the caller already holds 10 webhook endpoints (this one counts)"),
			server.Fails(http.StatusForbidden, "invalid_credentials or mfa_required: the password or two-factor code is wrong, or two-factor is on and no code was sent"),
		},
	}, user)
	server.Handle(g, fiber.MethodPatch, "/me/webhook", server.Op[rotateRequest]{
		Summary:     "Rotate the webhook signing secret",
		Description: "Issues a new signing secret for the caller's webhook endpoint (`secret` null or left out here mints a whsec_ secret, returned once); deliveries are signed with it from now on, and with the previous one too for `expiresIn` seconds (24 hours when left out, at most 48; 0 stops the previous one at once): `webhook-signature` then carries both `v1,` signatures, `X-Platform-Signature` the new one.",
		Class:       ratelimit.Write, Handle: h.rotate,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the endpoint; the new secret signs every attempt from now on, the previous one beside it until previousSecretExpiresAt", schemas.WebhookSubscriptionMinted{}),
			server.Fails(http.StatusNotFound, "not_found: no such webhook subscription of the caller"),
		},
	}, user)
	server.Post(g, "/webhook-subs", server.Op[subscribeRequest]{
		Summary:     "Add a further webhook subscription",
		Description: "Adds a subscription (URL and event types) to the caller's webhook endpoints. With an Idempotency-Key a retry answers the first answer byte for byte (Idempotent-Replayed: true) and creates nothing. Needs the caller's `password` (and `code` when two-factor is on); the owner is mailed a notice. Only a fiat admin's login session (with two-factor in production), never an API key, makes an endpoint that receives every user's events; others receive the events about the caller.",
		Class:       ratelimit.Write, Handle: h.addSubscription,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "the new subscription", schemas.WebhookSubscriptionMinted{}),
			server.Fails(http.StatusConflict, "webhook_limit_reached or idempotency_key_reused: a user may hold at most 10 webhook subscriptions; or the Idempotency-Key came with another body"),
			server.Fails(http.StatusForbidden, "invalid_credentials or mfa_required: the password or two-factor code is wrong, or two-factor is on and no code was sent"),
		},
	}, user)
	h.registerOwner(g, user)
	server.Get(g, "/admin/webhook-deliveries", server.Op[listDeliveriesRequest]{
		Summary:     "Webhook delivery log (fiat admin)",
		Description: "Pages through webhook deliveries with their attempts and status. Read-only.",
		Role:        fiatAdmin, Handle: h.listDeliveries,
		Responses: []server.Response{server.Answers(http.StatusOK, "deliveries, newest first", schemas.Page[schemas.WebhookDelivery]{})},
	}, user, admin)
	server.Post(g, "/admin/webhook-deliveries/:id/retry", server.Op[deliveryPath]{
		Summary:     "Attempt a webhook delivery again now (fiat admin)",
		Description: "Sends a webhook delivery again now and records the attempt.",
		Class:       ratelimit.Write, Role: fiatAdmin,
		Handle: h.retryDelivery,
		Responses: []server.Response{
			server.Answers(http.StatusAccepted, "queued for an attempt now", schemas.WebhookDelivery{}),
			server.Fails(http.StatusNotFound, "not_found: no such webhook delivery"),
		},
	}, user, admin)
	server.Post(g, "/admin/events/ticket", server.Op[server.NoRequest]{
		Summary: "Mint a single-use ticket for the admin event stream (fiat admin)", Class: ratelimit.Write, Role: fiatAdmin,
		Description: "Mints a ticket, bound to the calling admin and valid once for about a minute, that opens GET /admin/events?ticket= (a browser's EventSource cannot send the bearer token); only its hash is kept.",
		Handle:      h.mintTicket,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "a ticket that opens GET /admin/events?ticket= once, within a minute", schemas.StreamTicket{}),
		},
	}, user, admin)
	server.Get(g, "/admin/events", server.Op[eventsRequest]{
		Summary:     "Server-sent events of every platform event (fiat admin)",
		Description: "A server-sent event stream of every platform event; reconnect with Last-Event-ID to resume. Read-only.",
		Role:        fiatAdmin, Handle: h.events,
		Responses: []server.Response{{Status: http.StatusOK, Description: "server-sent events of every platform event", ContentType: "text/event-stream"}},
	}, h.streamAuth(user), admin)
	server.Get(g, "/admin/stream", server.Op[server.NoRequest]{
		Summary:     "Browser page showing the admin event stream (it holds no data)",
		Description: "An HTML page that opens the admin event stream in the browser; the page holds no data itself (the stream needs a fiat admin's token). Read-only.",
		Public:      true, Handle: h.page,
		Responses: []server.Response{{Status: http.StatusOK, Description: "the admin event stream page", ContentType: "text/html"}},
	})
	return nil
}

// registerOwner mounts the routes an owner manages their endpoints with:
// list, read, change and delete them, read their delivery logs, retry a
// failed delivery and send a test event. Another user's endpoint or
// delivery is 404, whether it exists or not.
func (h *Handlers) registerOwner(g server.Router, user fiber.Handler) {
	notMine := server.Fails(http.StatusNotFound, "not_found: no such webhook subscription of the caller")
	server.Get(g, "/me/webhooks", server.Op[listEndpointsRequest]{
		Summary: "The caller's webhook endpoints", Handle: h.listEndpoints,
		Description: "Lists the /me/webhook endpoint and every /webhook-subs subscription of the caller, newest first, with url, events, enabled and timestamps; never a secret. Changes nothing.",
		Responses: []server.Response{server.Answers(http.StatusOK,
			"the /me/webhook endpoint and every /webhook-subs subscription, newest first; secrets are never shown",
			schemas.Page[schemas.WebhookSubscriptionDetail]{})},
	}, user)
	server.Handle(g, fiber.MethodDelete, "/me/webhook", server.Op[meRequest]{
		Summary: "Delete the caller's primary webhook endpoint", Class: ratelimit.Write, Handle: h.deletePrimary,
		Description: "Deletes the caller's /me/webhook endpoint and its delivery log; nothing is delivered to it afterwards.",
		Responses:   []server.Response{{Status: http.StatusNoContent, Description: "deleted with its delivery log"}, notMine},
	}, user)
	server.Get(g, "/me/webhook/deliveries", server.Op[ownerDeliveriesRequest]{
		Summary: "Delivery log of the caller's primary webhook endpoint", Handle: h.primaryDeliveries,
		Description: "Pages the deliveries of the caller's /me/webhook endpoint with status, attempts, the last status code, error and duration. Changes nothing.",
		Responses: []server.Response{server.Answers(http.StatusOK, "deliveries, newest first",
			schemas.Page[schemas.WebhookDelivery]{}), notMine},
	}, user)
	server.Post(g, "/me/webhook/deliveries/:deliveryId/retry", server.Op[primaryRetryRequest]{
		Summary: "Attempt a failed delivery of the primary endpoint again now", Class: ratelimit.Write, Handle: h.primaryRetry,
		Description: "Queues a failed or dead-lettered delivery of the caller's /me/webhook endpoint for an attempt now, signed like the first.",
		Responses: []server.Response{
			server.Answers(http.StatusAccepted, "queued for an attempt now", schemas.WebhookDelivery{}),
			server.Fails(http.StatusConflict, "invalid_state: the delivery is pending or delivered"),
			server.Fails(http.StatusNotFound, "not_found: no such delivery of the caller's endpoint"),
		},
	}, user)
	server.Post(g, "/me/webhook/test", server.Op[meRequest]{
		Summary: "Send a signed webhook.test event to the primary endpoint", Class: ratelimit.Write, Handle: h.primaryTest,
		Description: "Queues a signed webhook.test delivery to the caller's /me/webhook endpoint through the normal delivery path (its log shows the outcome).",
		Responses:   []server.Response{server.Answers(http.StatusAccepted, "the test delivery, queued", schemas.WebhookDelivery{}), notMine},
	}, user)
	server.Get(g, "/me/events/stream", server.Op[myEventsRequest]{
		Summary:     "Server-sent events of the events about the caller (what `platform webhooks listen` forwards)",
		Description: "Streams, as server-sent events, every platform event about the caller (the payload a webhook delivery carries); resumes after Last-Event-ID. Changes nothing.",
		Handle:      h.myEvents,
		Responses: []server.Response{{Status: http.StatusOK, ContentType: "text/event-stream",
			Description: "one message per event about the caller: id the event id, event its type, data the delivery payload"}},
	}, user)
	server.Get(g, "/webhook-subs/:id", server.Op[endpointPath]{
		Summary: "One of the caller's webhook endpoints", Handle: h.getEndpoint,
		Description: "Answers one of the caller's endpoints without its secret; another user's id is 404. Changes nothing.",
		Responses: []server.Response{server.Answers(http.StatusOK, "the endpoint, without its secret",
			schemas.WebhookSubscriptionDetail{}), notMine},
	}, user)
	server.Handle(g, fiber.MethodPatch, "/webhook-subs/:id", server.Op[patchEndpointRequest]{
		Summary: "Change a webhook endpoint: url, events, enabled, secret", Class: ratelimit.Write, Handle: h.patchEndpoint,
		Description: "Changes the url, events or enabled flag of one of the caller's endpoints; `secret` rotates the signing secret (null mints a whsec_ secret, returned once). A new `url` needs the caller's `password` (and `code` when two-factor is on) and mails the owner a notice.",
		Responses: []server.Response{server.Answers(http.StatusOK,
			"the endpoint; a new secret signs every attempt from now on", schemas.WebhookEndpointPatched{}), notMine},
	}, user)
	server.Handle(g, fiber.MethodDelete, "/webhook-subs/:id", server.Op[endpointPath]{
		Summary: "Delete a webhook endpoint", Class: ratelimit.Write, Handle: h.deleteEndpoint,
		Description: "Deletes one of the caller's endpoints and its delivery log; another user's id is 404.",
		Responses:   []server.Response{{Status: http.StatusNoContent, Description: "deleted with its delivery log"}, notMine},
	}, user)
	server.Get(g, "/webhook-subs/:id/deliveries", server.Op[endpointDeliveriesRequest]{
		Summary: "Delivery log of one of the caller's webhook endpoints", Handle: h.endpointDeliveries,
		Description: "Pages the deliveries of one of the caller's endpoints with status, attempts, the last status code, error and duration. Changes nothing.",
		Responses: []server.Response{server.Answers(http.StatusOK, "deliveries, newest first",
			schemas.Page[schemas.WebhookDelivery]{}), notMine},
	}, user)
	server.Post(g, "/webhook-subs/:id/deliveries/:deliveryId/retry", server.Op[endpointRetryRequest]{
		Summary: "Attempt a failed delivery again now", Class: ratelimit.Write, Handle: h.endpointRetry,
		Description: "Queues a failed or dead-lettered delivery of one of the caller's endpoints for an attempt now, signed like the first.",
		Responses: []server.Response{
			server.Answers(http.StatusAccepted, "queued for an attempt now", schemas.WebhookDelivery{}),
			server.Fails(http.StatusConflict, "invalid_state: the delivery is pending or delivered"),
			server.Fails(http.StatusNotFound, "not_found: no such delivery of the caller's endpoint"),
		},
	}, user)
	server.Post(g, "/webhook-subs/:id/test", server.Op[endpointPath]{
		Summary: "Send a signed webhook.test event to an endpoint", Class: ratelimit.Write, Handle: h.endpointTest,
		Description: "Queues a signed webhook.test delivery to one of the caller's endpoints through the normal delivery path (its log shows the outcome).",
		Responses:   []server.Response{server.Answers(http.StatusAccepted, "the test delivery, queued", schemas.WebhookDelivery{}), notMine},
	}, user)
}

// Vault seals values kept at rest, bound to their owner.
type Vault interface {
	SealText(plaintext, aad string) (string, error)
	OpenText(stored, aad string) (string, error)
}
