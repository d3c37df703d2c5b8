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
	store "github.com/fintech/platform/storage/webhooks"
	"github.com/fintech/platform/topics"
)

// Store is what the handlers need from the webhook repository.
type Store interface {
	SavePrimary(ctx context.Context, sub store.Subscription) (store.Subscription, bool, error)
	Add(ctx context.Context, sub store.Subscription, max int) (store.Subscription, error)
	RotateSecret(ctx context.Context, userID, id, secret string, now time.Time) (store.Subscription, error)
	List(ctx context.Context, f store.Filter) ([]store.Delivery, error)
	Retry(ctx context.Context, id string, now time.Time) (store.Delivery, error)
	CreateStreamTicket(ctx context.Context, tokenHash, userID string, expiresAt, now time.Time) error
	UseStreamTicket(ctx context.Context, tokenHash string, now time.Time) (string, error)
}

// Stream is the admin event stream source.
type Stream interface {
	Subscribe(lastID string, recent int) ([]topics.Message, *topics.Listener)
}

// Waker is told that a delivery was queued for now.
type Waker interface{ Wake() }

// Resolver resolves endpoint host names (net.DefaultResolver).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

var (
	_ Store  = (*store.Store)(nil)
	_ Stream = (*topics.Hub)(nil)
)

// Config holds the handlers' options.
type Config struct {
	// AllowPrivate lifts the https and public-address rules on endpoint
	// URLs (WEBHOOK_ALLOW_PRIVATE=1).
	AllowPrivate bool
	// Resolver resolves endpoint hosts. Default net.DefaultResolver.
	Resolver Resolver
	// Heartbeat is the interval of the stream's comment heartbeat. Default
	// 15 s.
	Heartbeat time.Duration
}

// setDefaults fills the options left out.
func (c *Config) setDefaults() {
	if c.Resolver == nil {
		c.Resolver = net.DefaultResolver
	}
	if c.Heartbeat == 0 {
		c.Heartbeat = 15 * time.Second
	}
}

// Validate reports every problem of the options.
func (c Config) Validate() error {
	var errs []error
	if c.Heartbeat < 0 {
		errs = append(errs, errors.New("webhooks: Heartbeat must not be negative"))
	}
	return errors.Join(errs...)
}

// MaxSubscriptions caps the subscriptions (the primary one included) a user
// may hold.
const MaxSubscriptions = 10

// Handlers serve the webhook routes.
type Handlers struct {
	store  Store
	stream Stream
	waker  Waker
	tokens *auth.Tokens
	admin  fiber.Handler
	vault  Vault
	now    func() time.Time
	cfg    Config
}

// NewHandlers checks the dependencies and builds the handlers. admin admits
// only fiat admins (verified e-mail on the allowlist): the delivery log,
// retries and the stream are theirs. vault seals signing secrets before
// they are stored.
func NewHandlers(store Store, stream Stream, waker Waker, tokens *auth.Tokens, admin fiber.Handler, vault Vault,
	now func() time.Time, cfg Config) (*Handlers, error) {
	if store == nil || stream == nil || waker == nil || tokens == nil || admin == nil || vault == nil || now == nil {
		return nil, errors.New("webhook handlers: nil dependency")
	}
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Handlers{store: store, stream: stream, waker: waker, tokens: tokens, admin: admin, vault: vault, now: now, cfg: cfg}, nil
}

// fiatAdmin is the role of the admin routes.
const fiatAdmin = "fiat admin"

// Register mounts the routes under /api/fiat. Each operation is declared
// with its request and answer types (server.Op); they are documented in the
// fiat slice, whose prefix they share.
func (h *Handlers) Register(r server.Router) {
	g := r.Group("/api/fiat")
	user := h.tokens.Require()
	admin := h.admin
	server.Post(g, "/me/webhook", server.Op[subscribeRequest]{
		Summary:     "Create or replace the caller's webhook endpoint",
		Description: "Sets the URL and the event types of the caller's webhook endpoint, replacing any before, and answers its signing secret.",
		Class:       ratelimit.Write, Handle: h.savePrimary,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "the caller's first endpoint", schemas.WebhookSubscription{}),
			server.Answers(http.StatusOK, "the endpoint replaced: same id and createdAt, new url, secret and events", schemas.WebhookSubscription{}),
		},
	}, user)
	server.Handle(g, fiber.MethodPatch, "/me/webhook", server.Op[rotateRequest]{
		Summary:     "Rotate the webhook signing secret",
		Description: "Issues a new signing secret for the caller's webhook endpoint; deliveries are signed with it from now on.",
		Class:       ratelimit.Write, Handle: h.rotate,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the endpoint; the new secret signs every attempt from now on", schemas.WebhookSubscription{}),
			server.Fails(http.StatusNotFound, "not_found: no such webhook subscription of the caller"),
		},
	}, user)
	server.Post(g, "/webhook-subs", server.Op[subscribeRequest]{
		Summary:     "Add a further webhook subscription",
		Description: "Adds a subscription (URL and event types) to the caller's webhook endpoints.",
		Class:       ratelimit.Write, Handle: h.addSubscription,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "the new subscription", schemas.WebhookSubscription{}),
			server.Fails(http.StatusConflict, "webhook_limit_reached: a user may hold at most 10 webhook subscriptions"),
		},
	}, user)
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
		Handle: h.mintTicket,
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
}

// Vault seals values kept at rest, bound to their owner.
type Vault interface {
	SealText(plaintext, aad string) (string, error)
}
