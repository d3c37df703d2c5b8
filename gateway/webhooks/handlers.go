package webhooks

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
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

// Config holds the handlers' dependencies and settings.
type Config struct {
	Store  Store
	Stream Stream
	Waker  Waker
	Tokens *auth.Tokens
	// Admin admits only fiat admins (verified e-mail on the allowlist): the
	// delivery log, retries and the stream are theirs.
	Admin fiber.Handler
	// Vault seals signing secrets before they are stored.
	Vault Vault
	// AllowPrivate lifts the https and public-address rules on endpoint
	// URLs (WEBHOOK_ALLOW_PRIVATE=1).
	AllowPrivate bool
	// Resolver resolves endpoint hosts. Default net.DefaultResolver.
	Resolver Resolver
	// Heartbeat is the interval of the stream's comment heartbeat. Default
	// 15 s.
	Heartbeat time.Duration
	Now       func() time.Time
}

// MaxSubscriptions caps the subscriptions (the primary one included) a user
// may hold.
const MaxSubscriptions = 10

// Handlers serve the webhook routes.
type Handlers struct {
	cfg Config
}

// NewHandlers checks the dependencies and builds the handlers.
func NewHandlers(cfg Config) (*Handlers, error) {
	if cfg.Store == nil || cfg.Stream == nil || cfg.Waker == nil || cfg.Tokens == nil || cfg.Admin == nil || cfg.Vault == nil || cfg.Now == nil {
		return nil, errors.New("webhook handlers: nil dependency")
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = 15 * time.Second
	}
	return &Handlers{cfg: cfg}, nil
}

// Register mounts the routes under /api/fiat.
func (h *Handlers) Register(r server.Router) {
	g := r.Group("/api/fiat")
	user := h.cfg.Tokens.Require()
	admin := h.cfg.Admin
	g.Post("/me/webhook", ratelimit.Write, "Create or replace the caller's webhook endpoint", user, h.savePrimary)
	g.Handle(fiber.MethodPatch, "/me/webhook", ratelimit.Write, "Rotate the webhook signing secret", user, h.rotate)
	g.Post("/webhook-subs", ratelimit.Write, "Add a further webhook subscription", user, h.addSubscription)
	g.Get("/admin/webhook-deliveries", "Webhook delivery log (fiat admin)", user, admin, h.listDeliveries)
	g.Post("/admin/webhook-deliveries/:id/retry", ratelimit.Write, "Attempt a webhook delivery again now (fiat admin)",
		user, admin, h.retryDelivery)
	g.Get("/admin/events", "Server-sent events of every platform event (fiat admin)",
		queryToken, user, admin, h.events)
	g.Get("/admin/stream", "Browser page showing the admin event stream", h.page)
}

// Vault seals values kept at rest, bound to their owner.
type Vault interface {
	SealText(plaintext, aad string) (string, error)
}
