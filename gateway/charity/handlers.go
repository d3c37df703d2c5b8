// Package charity serves the charity campaigns under /api/charity.
// Campaign creation and approval write Postgres directly (low rate, no
// balances) with their events in the outbox. A donation moves money, so it is
// a command on fiat.commands keyed by the donor's wallet, applied by the fiat
// consumer in its batch and answered with its reply. Reads come from
// Postgres; /stats from the ClickHouse copy of the events.
package charity

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
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/charity"
	"github.com/fintech/platform/storage/clickhouse"
	"github.com/fintech/platform/storage/pipeline"
)

// Prefix is the path prefix of the module.
const Prefix = "/api/charity"

// Sender publishes a command and waits for its reply.
type Sender interface {
	Send(ctx context.Context, cmd commands.Command) (schemas.Reply, error)
}

var _ Sender = (*commands.Bus)(nil)

// Writer writes campaigns with their outbox rows.
type Writer interface {
	Create(ctx context.Context, c store.Campaign, events []pipeline.OutboxRow) error
	Approve(ctx context.Context, id string, pin, feature bool, now time.Time,
		events func(store.Campaign) ([]pipeline.OutboxRow, error)) (store.Campaign, error)
}

// Reader reads campaigns.
type Reader interface {
	Get(ctx context.Context, id string) (store.Campaign, error)
	RecentDonors(ctx context.Context, campaignID string, n int) ([]store.Donor, error)
	DonorCount(ctx context.Context, campaignID string) (int64, error)
	DistinctDonors(ctx context.Context) (int64, error)
	WalletOwner(ctx context.Context, walletID string) (userID, kind string, err error)
	List(ctx context.Context, f store.Filter, after *store.Cursor, limit int) ([]store.Campaign, int64, error)
	ActiveCount(ctx context.Context, now time.Time) (int64, error)
}

var (
	_ Writer = (*store.Campaigns)(nil)
	_ Reader = (*store.Campaigns)(nil)
)

// Stats reads the charity aggregates from the analytics copy.
type Stats interface {
	CharityStats(ctx context.Context) (clickhouse.CharityStats, error)
}

var _ Stats = (*clickhouse.Analytics)(nil)

// Config holds the module's options.
type Config struct {
	// PublicBaseURL is the absolute http(s) base of thank-you URLs
	// (PUBLIC_BASE_URL); a trailing slash is dropped.
	PublicBaseURL string
}

func (c *Config) setDefaults() {
	c.PublicBaseURL = strings.TrimRight(c.PublicBaseURL, "/")
}

// Validate reports every problem of the configuration.
func (c Config) Validate() error {
	var errs []error
	if !strings.HasPrefix(c.PublicBaseURL, "http://") && !strings.HasPrefix(c.PublicBaseURL, "https://") {
		errs = append(errs, errors.New("charity handlers: PublicBaseURL must be an absolute http(s) URL"))
	}
	return errors.Join(errs...)
}

// Handlers serve /api/charity.
type Handlers struct {
	writer    Writer
	reader    Reader
	sender    Sender
	analytics Stats
	db        platform.Pinger
	require   fiber.Handler
	optional  fiber.Handler
	admin     fiber.Handler
	now       func() time.Time
	routes    func() []server.Route
	cfg       Config
}

// NewHandlers builds the handlers. require authenticates the caller (the
// JWT middleware) and optional reads a token when there is one; admin
// admits only charity admins after either; routes lists the server's routes
// for /openapi.json.
func NewHandlers(writer Writer, reader Reader, sender Sender, stats Stats, db platform.Pinger,
	require, optional, admin fiber.Handler, now func() time.Time, routes func() []server.Route, cfg Config) (*Handlers, error) {
	if writer == nil || reader == nil || sender == nil || stats == nil || db == nil ||
		require == nil || optional == nil || admin == nil || now == nil || routes == nil {
		return nil, errors.New("charity handlers: nil dependency")
	}
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Handlers{writer: writer, reader: reader, sender: sender, analytics: stats, db: db, require: require,
		optional: optional, admin: admin, now: now, routes: routes, cfg: cfg}, nil
}

// adminRole is who may approve campaigns.
const adminRole = "charity admin"

// campaignPath is the request of an operation on one campaign.
type campaignPath struct {
	ID string `path:"id" json:"-" format:"ksuid"`
}

// Register mounts the routes. Each operation is declared with its request
// and answer types (server.Op): binding, validation and the OpenAPI slice
// come from these declarations.
func (h *Handlers) Register(r server.Router) {
	g := r.Group(Prefix).KeyArea("charity")
	type resp = server.Response
	answers, fails := server.Answers, server.Fails
	platform.BasicsOf(g, "charity", platform.Health(h.db, h.health), schemas.CharityHealth{}, openapi.Handler(h.routes, openapi.Doc{
		Title:       "Charity campaigns",
		Description: "Campaigns proposed by users and approved by charity admins; donations from KZT wallets settle through the wallet pipeline.",
		Prefixes:    []string{Prefix},
	}))
	server.Get(g, "/campaigns", server.Op[listCampaignsRequest]{
		Summary:     "Approved campaigns, pinned first; query category, status (active | ended), cursor, limit",
		Description: "Pages through approved campaigns, pinned first, optionally of a category or status. Read-only.",
		Public:      true,
		Handle:      h.listCampaigns,
		Responses:   []resp{answers(http.StatusOK, "approved campaigns, pinned first", schemas.CampaignList{})},
	})
	server.Get(g, "/campaigns/:id", server.Op[campaignPath]{
		Summary:     "One campaign with progress, recent donors and media",
		Description: "One approved campaign with its progress, recent donors and media. Read-only.",
		Public:      true, Handle: h.getCampaign,
		Responses: []resp{
			answers(http.StatusOK, "the campaign", schemas.Campaign{}),
			fails(http.StatusNotFound, "not_found: unknown, or pending and neither yours nor seen by a charity admin"),
		},
	}, h.optional, h.probeAdmin)
	server.Post(g, "/campaigns", server.Op[createCampaignRequest]{
		Summary:     "Propose a campaign (pending until a charity admin approves it)",
		Description: "Creates a campaign of the caller in pending; it is listed once a charity admin approves it.",
		Class:       ratelimit.Write,
		Handle:      h.createCampaign,
		Responses:   []resp{answers(http.StatusCreated, "the pending campaign", schemas.Campaign{})},
	}, h.require)
	server.Post(g, "/campaigns/:id/approve", server.Op[approveRequest]{
		Summary:     "Approve a pending campaign, optionally pinned or featured (charity admins)",
		Description: "Moves a pending campaign to active, optionally pinned or featured; it is listed from then on.",
		Class:       ratelimit.Write,
		Role:        adminRole, Handle: h.approveCampaign,
		Responses: []resp{
			answers(http.StatusOK, "the active campaign", schemas.Campaign{}),
			fails(http.StatusNotFound, "not_found: no such campaign"),
			fails(http.StatusConflict, "invalid_state: only a pending campaign can be approved"),
		},
	}, h.require, h.admin)
	server.Post(g, "/campaigns/:id/donations", server.Op[donateRequest]{
		Summary:     "Donate from the caller's KZT wallet to an active campaign",
		Description: "Moves the amount from the caller's KZT wallet to the campaign and adds it to the campaign's total.",
		Class:       ratelimit.Money, Handle: h.donate,
		Responses: []resp{
			answers(http.StatusCreated, "the settled donation", schemas.DonationResult{}),
			fails(http.StatusBadRequest, "insufficient_balance or wallet_inactive: the wallet cannot pay the amount"),
			fails(http.StatusForbidden, "kyc_required: the amount is over the caller's pre-KYC cap"),
			fails(http.StatusNotFound, "not_found or wallet_not_found: no such active campaign, or no such KZT wallet of the caller"),
			fails(http.StatusConflict, "campaign_not_active or idempotency_key_reused: the campaign is pending or ended, or the Idempotency-Key came with another body"),
		},
	}, h.require)
	server.Get(g, "/stats", server.Op[server.NoRequest]{
		Summary:     "Total raised, distinct donors and top categories (analytics copy)",
		Description: "Total raised, distinct donors and top categories, from the analytics copy. Read-only.",
		Public:      true, Handle: h.stats,
		Responses: []resp{answers(http.StatusOK, "aggregates", schemas.CharityStats{})},
	})
}

func (h *Handlers) health(ctx context.Context) (map[string]any, error) {
	n, err := h.reader.ActiveCount(ctx, h.now().UTC())
	if err != nil {
		return nil, err
	}
	return map[string]any{"activeCampaigns": n}, nil
}

// caller returns the authenticated user id ("" when anonymous).
func caller(c *fiber.Ctx) string {
	p, _ := auth.User(c)
	return p.UserID
}

// validID reports whether s can name a record at all (a ksuid). Anything
// else is answered 404 like an unknown id.
func validID(s string) bool { return schemas.IsID(s) }

var errCampaignNotFound = apierr.New(http.StatusNotFound, apierr.CodeNotFound, "no such campaign")

// campaign reads the campaign named in the path as the caller may see it:
// a pending campaign is visible only to its proposer and to charity admins;
// to everyone else it does not exist.
func (h *Handlers) campaign(c *fiber.Ctx, id string, admin bool) (store.Campaign, error) {
	if !validID(id) {
		return store.Campaign{}, errCampaignNotFound
	}
	camp, err := h.reader.Get(c.UserContext(), id)
	if err != nil {
		if isNotFound(err) {
			return store.Campaign{}, errCampaignNotFound
		}
		return store.Campaign{}, err
	}
	if camp.Status == schemas.CampaignPending && !admin && camp.ProposerUserID != caller(c) {
		return store.Campaign{}, errCampaignNotFound
	}
	return camp, nil
}

// outboxRow encodes one emission as an outbox row.
func outboxRow(topic, typ, key, actor string, data any, now time.Time) (pipeline.OutboxRow, error) {
	env, err := schemas.New(typ, key, actor, data, now)
	if err != nil {
		return pipeline.OutboxRow{}, err
	}
	return pipeline.EventRow(topic, env)
}
