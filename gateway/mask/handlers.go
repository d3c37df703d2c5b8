// Package mask serves the virtual payment masks under /api/mask. Writes
// (issue, revoke, charge) are commands on mask.commands keyed by the mask id
// and answered with the mask consumer's reply; reads come from Postgres and
// are always scoped to the caller: users never see another user's masks.
//
// Merchants never see real card data: the platform stores no real PAN at
// all, and every endpoint and event shows only the virtual PAN.
package mask

import (
	"context"
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/commands"
	"github.com/fintech/platform/gateway/platform"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/mask"
)

// Prefix is the path prefix of the module.
const Prefix = "/api/mask"

// Sender publishes a command and waits for its reply.
type Sender interface {
	Send(ctx context.Context, cmd commands.Command) (schemas.Reply, error)
}

var _ Sender = (*commands.Bus)(nil)

// Reader is what the handlers read from storage, always for one owner.
type Reader interface {
	Owned(ctx context.Context, maskID, userID string) (store.MaskRow, error)
	ListActive(ctx context.Context, userID string, now time.Time, after string, limit int) ([]store.MaskRow, error)
	ListCharges(ctx context.Context, userID, maskID, after string, limit int) ([]store.ChargeRow, error)
	Stats(ctx context.Context, userID string, now time.Time) (store.Stats, error)
}

var _ Reader = (*store.Masks)(nil)

// Handlers serve /api/mask.
type Handlers struct {
	reader  Reader
	sender  Sender
	db      platform.Pinger
	require fiber.Handler
	now     func() time.Time
	routes  func() []server.Route
}

// NewHandlers builds the handlers. require authenticates the caller (the
// JWT middleware); routes lists the server's routes for /openapi.json.
func NewHandlers(reader Reader, sender Sender, db platform.Pinger, require fiber.Handler,
	now func() time.Time, routes func() []server.Route) (*Handlers, error) {
	if reader == nil || sender == nil || db == nil || require == nil || now == nil || routes == nil {
		return nil, errors.New("mask handlers: nil dependency")
	}
	return &Handlers{reader: reader, sender: sender, db: db, require: require, now: now, routes: routes}, nil
}

// publicPaths are the routes that need no bearer token.
var publicPaths = map[string]bool{Prefix + "/health": true, Prefix + "/openapi.json": true}

// Register mounts the routes.
func (h *Handlers) Register(r server.Router) {
	g := r.Group(Prefix)
	g.Get("/health", "Liveness and database reachability", platform.Health(h.db, nil))
	g.Get("/openapi.json", "OpenAPI 3.0 slice of the mask module", h.openapi)
	g.Post("/masks", ratelimit.Write, "Issue a virtual mask", h.require, h.createMask)
	g.Get("/masks", "The caller's active masks with their remaining balance", h.require, h.listMasks)
	g.Post("/masks/:id/revoke", ratelimit.Write, "Soft-revoke one of the caller's masks", h.require, h.revokeMask)
	g.Post("/charges", ratelimit.Money, "Authorize a charge against a mask, with a risk score 0..100", h.require, h.createCharge)
	g.Get("/charges", "The caller's charges, optionally of one mask", h.require, h.listCharges)
	g.Get("/stats", "The caller's roll-up: active masks, total spend, decline rate, mean risk score", h.require, h.stats)
}

// caller returns the authenticated user id (require ran before).
func caller(c *fiber.Ctx) string {
	p, _ := auth.User(c)
	return p.UserID
}
