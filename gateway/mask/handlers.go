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
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/commands"
	"github.com/fintech/platform/gateway/openapi"
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
	ListActive(ctx context.Context, userID string, now time.Time, after schemas.Position, limit int) ([]store.MaskRow, error)
	ListCharges(ctx context.Context, userID, maskID string, after schemas.Position, limit int) ([]store.ChargeRow, error)
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

// Register mounts the routes. Each operation is declared with its request
// and answer types (server.Op): binding, validation and the OpenAPI slice
// come from these declarations.
func (h *Handlers) Register(r server.Router) {
	g := r.Group(Prefix).KeyArea("mask")
	platform.Basics(g, "mask", platform.Health(h.db, nil), openapi.Handler(h.routes, openapi.Doc{
		Title:       "Virtual payment masks",
		Description: "Virtual cards that stand in for a real card. No real card data is stored or shown: only the virtual PAN.",
		Prefixes:    []string{Prefix},
	}))
	server.Post(g, "/masks", server.Op[createMaskRequest]{
		Summary:     "Issue a virtual mask",
		Description: "Issues a virtual card (mask) of the caller with a spending limit; only its virtual PAN is ever shown.",
		Class:       ratelimit.Write, Handle: h.createMask,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "the issued mask", schemas.Mask{}),
			server.Fails(http.StatusConflict, "idempotency_key_reused: the Idempotency-Key came with another body"),
		},
	}, h.require)
	server.Get(g, "/masks", server.Op[listMasksRequest]{
		Summary:     "The caller's active masks with their remaining balance",
		Description: "Lists the caller's active masks with what is left of each limit. Read-only.",
		Handle:      h.listMasks,
		Responses:   []server.Response{server.Answers(http.StatusOK, "the caller's active masks", schemas.Page[schemas.Mask]{})},
	}, h.require)
	server.Post(g, "/masks/:id/revoke", server.Op[maskPath]{
		Summary:     "Soft-revoke one of the caller's masks",
		Description: "Revokes one of the caller's masks: further charges are declined. Another user's mask answers 404.",
		Class:       ratelimit.Write, Handle: h.revokeMask,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the revoked mask", schemas.Mask{}),
			server.Fails(http.StatusNotFound, "not_found: no such mask of the caller"),
		},
	}, h.require)
	server.Post(g, "/charges", server.Op[createChargeRequest]{
		Summary:     "Authorize a charge against a mask, with a risk score 0..100",
		Description: "Authorizes (or declines) a charge against one of the caller's masks, scores its risk 0..100 and records it; an approved charge lowers the mask's remaining limit.",
		Class:       ratelimit.Money, Handle: h.createCharge,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "authorized", schemas.MaskChargeResult{}),
			server.Answers(http.StatusOK, "replay of an authorized (maskId, paymentRef): idempotent true", schemas.MaskChargeResult{}),
			server.Answers(http.StatusPaymentRequired, "charge_declined", schemas.MaskChargeDeclined{}),
			server.Fails(http.StatusNotFound, "not_found: no such mask of the caller"),
		},
	}, h.require)
	server.Get(g, "/charges", server.Op[listChargesRequest]{
		Summary:     "The caller's charges, optionally of one mask",
		Description: "Pages through the caller's charges, optionally of one mask. Read-only.",
		Handle:      h.listCharges,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the caller's charges", schemas.Page[schemas.MaskChargeResult]{}),
			server.Fails(http.StatusNotFound, "not_found: maskId names no mask of the caller"),
		},
	}, h.require)
	server.Get(g, "/stats", server.Op[server.NoRequest]{
		Summary:     "The caller's roll-up: active masks, total spend, decline rate, mean risk score",
		Description: "The caller's active masks, total spend, decline rate and mean risk score. Read-only.",
		Handle:      h.stats,
		Responses:   []server.Response{server.Answers(http.StatusOK, "roll-up", schemas.MaskStats{})},
	}, h.require)
}

// maskPath is the request of an operation on one mask.
type maskPath struct {
	ID string `path:"id" json:"-" format:"ksuid"`
}

// caller returns the authenticated user id (require ran before).
func caller(c *fiber.Ctx) string {
	p, _ := auth.User(c)
	return p.UserID
}
