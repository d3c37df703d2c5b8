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

// Deps are the handlers' dependencies; every one is required.
type Deps struct {
	Writer Writer
	Reader Reader
	Sender Sender
	Stats  Stats
	DB     platform.Pinger
	// Require authenticates the caller; Optional reads a token when present.
	Require, Optional fiber.Handler
	// Admin admits only charity admins (after Require or Optional).
	Admin fiber.Handler
	// PublicBaseURL prefixes thank-you URLs (no trailing slash).
	PublicBaseURL string
	Now           func() time.Time
	Routes        func() []server.Route
}

func (d Deps) validate() error {
	if d.Writer == nil || d.Reader == nil || d.Sender == nil || d.Stats == nil || d.DB == nil ||
		d.Require == nil || d.Optional == nil || d.Admin == nil || d.Now == nil || d.Routes == nil {
		return errors.New("charity handlers: nil dependency")
	}
	if !strings.HasPrefix(d.PublicBaseURL, "http://") && !strings.HasPrefix(d.PublicBaseURL, "https://") {
		return errors.New("charity handlers: PublicBaseURL must be an absolute http(s) URL")
	}
	return nil
}

// Handlers serve /api/charity.
type Handlers struct {
	d Deps
}

// NewHandlers builds the handlers.
func NewHandlers(d Deps) (*Handlers, error) {
	if err := d.validate(); err != nil {
		return nil, err
	}
	d.PublicBaseURL = strings.TrimRight(d.PublicBaseURL, "/")
	return &Handlers{d: d}, nil
}

// Register mounts the routes.
func (h *Handlers) Register(r server.Router) {
	g := r.Group(Prefix)
	g.Get("/health", "Liveness, database reachability, active-campaign count", platform.Health(h.d.DB, h.health))
	g.Get("/openapi.json", "OpenAPI 3.0 slice of the charity module", h.openapi)
	g.Get("/campaigns", "Approved campaigns, pinned first; query category, status (active | ended), cursor, limit", h.listCampaigns)
	g.Get("/campaigns/:id", "One campaign with progress, recent donors and media", h.d.Optional, h.probeAdmin, h.getCampaign)
	g.Post("/campaigns", ratelimit.Write, "Propose a campaign (pending until a charity admin approves it)", h.d.Require, h.createCampaign)
	g.Post("/campaigns/:id/approve", ratelimit.Write, "Approve a pending campaign, optionally pinned or featured (charity admins)",
		h.d.Require, h.d.Admin, h.approveCampaign)
	g.Post("/campaigns/:id/donations", ratelimit.Money, "Donate from the caller's KZT wallet to an active campaign",
		h.d.Require, h.donate)
	g.Get("/stats", "Total raised, distinct donors and top categories (analytics copy)", h.stats)
}

func (h *Handlers) health(ctx context.Context) (map[string]any, error) {
	n, err := h.d.Reader.ActiveCount(ctx, h.d.Now().UTC())
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
func (h *Handlers) campaign(c *fiber.Ctx, admin bool) (store.Campaign, error) {
	id := c.Params("id")
	if !validID(id) {
		return store.Campaign{}, errCampaignNotFound
	}
	camp, err := h.d.Reader.Get(c.UserContext(), id)
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
