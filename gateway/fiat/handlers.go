// Package fiat serves the fiat wallet module under /api/fiat: wallets,
// deposits through a Stripe-compatible processor, transfers, withdrawals,
// payouts, KYC, history and the admin actions. Every change of a balance is
// a command on fiat.commands, applied by consumers/fiat; the handlers only
// validate, resolve and wait for the consumer's reply.
package fiat

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/commands"
	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/platform"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/topics"
)

// Prefix is where the module is mounted.
const Prefix = "/api/fiat"

// Store is everything the handlers read and write directly (never
// balances): the one store the module is wired with. Each part of the
// handlers holds only the interface it uses, declared beside it.
type Store interface {
	WalletStore
	MoneyStore
	DepositStore
	HistoryStore
	KYCStore
	CommerceStore
	RefundStore
}

var _ Store = (*store.Store)(nil)

// Vault seals personal values kept at rest, bound to their row.
type Vault interface {
	SealText(plaintext, aad string) (string, error)
}

// Sender publishes a command and waits for its reply.
type Sender interface {
	Send(ctx context.Context, cmd commands.Command) (schemas.Reply, error)
}

// Config holds the module settings; the dependencies are NewHandlers'
// arguments.
type Config struct {
	// PublicBaseURL prefixes the checkout URLs (PUBLIC_BASE_URL).
	PublicBaseURL string
	// WebhookSecret is the processor's whsec_… signing secret (PROCESSOR_WEBHOOK_SECRET).
	WebhookSecret string
	// ProcessorKey is the real processor's API key; empty serves the local
	// checkout page and the embedded test processor (PROCESSOR_API_KEY).
	ProcessorKey string
	// KYCAutoApprove approves KYC submissions at once (KYC_AUTO_APPROVE).
	KYCAutoApprove bool
	// Caps are the pre-KYC limits, shown on the dashboard (the consumer
	// enforces them).
	Caps schemas.FiatCaps
	// ReconcileAlertURL receives a signed JSON POST when reconciliation
	// finds drift (RECONCILE_ALERT_URL; empty: no alert).
	ReconcileAlertURL string
	// ReconcileAlertSecret keys the alert's HMAC signature
	// (RECONCILE_ALERT_SECRET).
	ReconcileAlertSecret string
	// OnReconcile, when set, receives the lines of every reconciliation
	// from Postgres (the platform_reconcile_drift_minor gauge).
	OnReconcile func(lines []schemas.FiatCurrencyReconcile)
	// Analytics reads the processor side from the ClickHouse copy; nil
	// serves reconciliation from Postgres only.
	Analytics ProcessorLedger
	// HTTPTimeout bounds the module's outbound calls (the test processor's
	// webhook delivery, the drift alert); 15 s when zero.
	HTTPTimeout time.Duration
}

// TestProcessor reports whether deposits are paid through the embedded test
// processor (no PROCESSOR_API_KEY), the only mode in which this process
// signs processor events itself.
func (c Config) TestProcessor() bool { return c.ProcessorKey == "" }

func (c *Config) setDefaults() {
	if c.HTTPTimeout == 0 {
		c.HTTPTimeout = 15 * time.Second
	}
}

// Validate reports every missing or invalid setting.
func (c Config) Validate() error {
	var errs []error
	if c.PublicBaseURL == "" {
		errs = append(errs, errors.New("PUBLIC_BASE_URL is empty"))
	}
	if c.WebhookSecret == "" {
		errs = append(errs, errors.New("PROCESSOR_WEBHOOK_SECRET is empty"))
	}
	if c.ReconcileAlertURL != "" && !strings.HasPrefix(c.ReconcileAlertURL, "http://") && !strings.HasPrefix(c.ReconcileAlertURL, "https://") {
		errs = append(errs, errors.New("RECONCILE_ALERT_URL must start with http:// or https://"))
	}
	if c.HTTPTimeout < 0 {
		errs = append(errs, errors.New("HTTPTimeout is negative"))
	}
	return errors.Join(errs...)
}

// Handlers serve /api/fiat.
type Handlers struct {
	cfg      Config
	wallets  WalletStore
	money    MoneyStore
	deposits DepositStore
	history  HistoryStore
	kyc      KYCStore
	commerce CommerceStore
	// merchantKeys finds the merchant key of X-API-Key (merchant.go).
	merchantKeys auth.KeyLookup[store.MerchantKey]
	refunds      RefundStore
	bus          Sender
	authn        *auth.Authenticator
	vault        Vault
	admin        fiber.Handler
	db           platform.Pinger
	now          func() time.Time
	routes       func() []server.Route
	client       *http.Client
	// checkout opens sessions: the embedded test processor without
	// ProcessorKey, Stripe with it.
	checkout Checkout
	// targets caches what transfers resolve (see transferTarget).
	targets transferTargets
}

// Bounds of the transfer-target caches: a transfer from a wallet and to a
// recipient both seen in the last minute skips a Postgres query on the hot
// path.
const (
	targetCacheSize = 10_000
	targetCacheTTL  = time.Minute
)

// NewHandlers builds the handlers. vault seals KYC document numbers and
// bank accounts before they are stored or published; admin admits only fiat
// admins (FIAT_ADMIN_EMAILS, verified e-mail) after the bearer-token check;
// routes lists the server's routes for /openapi.json.
func NewHandlers(cfg Config, st Store, bus Sender, authn *auth.Authenticator, vault Vault, admin fiber.Handler,
	db platform.Pinger, now func() time.Time, routes func() []server.Route) (*Handlers, error) {
	if st == nil || bus == nil || authn == nil || vault == nil || admin == nil || db == nil || now == nil || routes == nil {
		return nil, errors.New("fiat handlers: nil dependency")
	}
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var co Checkout = localCheckout{baseURL: cfg.PublicBaseURL, newID: schemas.NewID}
	if cfg.ProcessorKey != "" {
		co = newStripeCheckout(cfg.ProcessorKey, cfg.PublicBaseURL)
	}
	return &Handlers{cfg: cfg, wallets: st, money: st, deposits: st, history: st, kyc: st, commerce: st, merchantKeys: merchantKeys(st), refunds: st, bus: bus, authn: authn, vault: vault, admin: admin, db: db, now: now,
		routes: routes, client: &http.Client{Timeout: cfg.HTTPTimeout}, checkout: co,
		targets: newTransferTargets()}, nil
}

// Register mounts the routes. Each operation is declared with its request
// and answer types (server.Op): binding, validation and the OpenAPI slice
// come from these declarations.
func (h *Handlers) Register(r server.Router) {
	g := r.Group(Prefix).KeyArea("fiat")
	tok := h.authn.Require()
	h.registerBasics(g)
	h.registerWallets(g, tok)
	h.registerDeposits(g, tok)
	h.registerMoney(g, tok)
	h.registerHistory(g, tok)
	h.registerMerchant(g, tok)
	h.registerRequests(g, tok)
	h.registerRefunds(g, tok)
	h.registerAdmin(g, tok, h.admin)
}

// adminRole is who may call the admin routes (FIAT_ADMIN_EMAILS).
const adminRole = "fiat admin"

// Answers several routes share.
var (
	failsWalletNotFound = server.Fails(http.StatusNotFound, "wallet_not_found: no such wallet of the caller")
	failsKeyReused      = server.Fails(http.StatusConflict, "idempotency_key_reused: the Idempotency-Key came with another body")
	failsKYC            = server.Fails(http.StatusForbidden, "kyc_required: beyond the limits of an account without KYC (submit KYC at /api/fiat/kyc/submit)")
	failsKeyInvalid     = server.Fails(http.StatusUnauthorized, "key_invalid: X-API-Key is missing, malformed, unknown or revoked")
)

// fiatHealth is the module's /health body: the platform's, with the
// number of active wallets.
type fiatHealth struct {
	platform.HealthAnswer
	ActiveWallets int64 `json:"activeWallets" required:"true"`
}

// registerBasics mounts GET /health (with the active wallet count) and GET
// /openapi.json.
func (h *Handlers) registerBasics(g server.Router) {
	health := platform.Health(h.db, h.healthCounts)
	// The fiat slice: every route under Prefix (gateway/webhooks mounts
	// there too).
	doc := openapi.Handler(h.routes, openapi.Doc{
		Title: "Fiat wallet API",
		Description: "KZT and USD wallets: top-ups through the card processor, transfers, withdrawals and payouts, " +
			"payment requests, merchant keys, authorizations, charges and refunds, KYC, webhook endpoints and the admin tools.",
		Prefixes: []string{Prefix},
	})
	server.Get(g, "/health", server.Op[server.NoRequest]{
		Summary:     "Liveness, database reachability, active wallet count",
		Description: "Reports whether the fiat module and its database answer, with the number of active wallets. Read-only.",
		Public:      true,
		Handle:      func(c *fiber.Ctx, _ *server.NoRequest) error { return health(c) },
		Responses:   []server.Response{server.Answers(http.StatusOK, "alive, and the database answers", fiatHealth{})},
	})
	server.Get(g, "/openapi.json", server.Op[server.NoRequest]{
		Summary: "OpenAPI 3.0 slice of the fiat module", Public: true,
		Description: "The OpenAPI document of the fiat routes (the webhook routes mounted under /api/fiat included). Read-only.",
		Handle:      func(c *fiber.Ctx, _ *server.NoRequest) error { return doc(c) },
		Responses:   []server.Response{server.Answers(http.StatusOK, "the document", platform.Document{})},
	})
}

func (h *Handlers) healthCounts(ctx context.Context) (map[string]any, error) {
	n, err := h.wallets.ActiveWallets(ctx)
	if err != nil {
		return nil, err
	}
	return map[string]any{"activeWallets": n}, nil
}

// Errors of the module.
var (
	errWalletNotFound = apierr.New(http.StatusNotFound, schemas.CodeWalletNotFound, "no such wallet")
	errSignature      = apierr.New(http.StatusBadRequest, schemas.CodeSignatureInvalid, "the Stripe-Signature header does not verify")
)

// send builds the command envelope with an id derived from the caller's
// Idempotency-Key (fresh without one) and the body hash, publishes it keyed
// by key and writes the consumer's reply byte for byte.
func (h *Handlers) send(c *fiber.Ctx, endpoint, typ, key string, data any) error {
	p, _ := auth.User(c)
	if _, err := commands.KeyOf(c); err != nil {
		return err
	}
	env, err := schemas.New(typ, key, p.UserID, data, h.now())
	if err != nil {
		return err
	}
	return commands.Exchange(c, h.bus, topics.FiatCommands, env, commands.RequestIdempotency(c, p.UserID, endpoint))
}

// sendEnv publishes a command built by the caller and writes the reply.
func (h *Handlers) sendEnv(c *fiber.Ctx, env schemas.Envelope) error {
	return commands.Exchange(c, h.bus, topics.FiatCommands, env, commands.Idempotency{})
}

// ownWallet loads a wallet of the caller; another user's is not found.
func (h *Handlers) ownWallet(c *fiber.Ctx, id string) (store.Wallet, error) {
	p, _ := auth.User(c)
	w, err := h.wallets.Wallet(c.UserContext(), id)
	if err != nil {
		if isNotFound(err) {
			return store.Wallet{}, errWalletNotFound
		}
		return store.Wallet{}, err
	}
	if w.UserID != p.UserID || w.Kind != store.KindUser {
		return store.Wallet{}, errWalletNotFound
	}
	return w, nil
}

// clean trims a string and copies it out of fiber's reused buffers.
func clean(s string) string { return strings.Clone(strings.TrimSpace(s)) }

// itemsOf answers a list the API does not page (a caller's wallets, keys,
// authorizations): every row, in the view the API shows.
func itemsOf[R, T any](rows []R, view func(R) T) schemas.FiatItems[T] {
	items := make([]T, len(rows))
	for i, r := range rows {
		items[i] = view(r)
	}
	return schemas.FiatItems[T]{Items: items}
}
