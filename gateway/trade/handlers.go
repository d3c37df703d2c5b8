// Package trade serves the test-net wallet under /api/trade (all JWT). Each
// user has one account in the TNU unit, opened by the first GET /accounts.
// Writes (top-up, transfer) are commands on trade.commands keyed by the
// account they debit and answered with the trade consumer's reply; reads
// come from Postgres and are scoped to the caller's account.
//
// Amounts are exact: a JSON number's text is parsed into integer units of
// 10^-7 TNU (schemas.ParseTNU) and written back as the exact decimal; no
// float is involved anywhere between the JSON parser and Postgres.
package trade

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/commands"
	"github.com/fintech/platform/gateway/platform"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/trade"
)

// Prefix is the path prefix of the module.
const Prefix = "/api/trade"

// Sender publishes a command and waits for its reply.
type Sender interface {
	Send(ctx context.Context, cmd commands.Command) (schemas.Reply, error)
}

var _ Sender = (*commands.Bus)(nil)

// Accounts is what the handlers read (and open) in storage.
type Accounts interface {
	Open(ctx context.Context, userID, newID string, now time.Time) (store.AccountRow, error)
	ByUser(ctx context.Context, userID string) (store.AccountRow, error)
	ByEmail(ctx context.Context, email string) (store.Lookup, error)
	Operations(ctx context.Context, accountID, after string, limit int) ([]store.OperationRow, error)
	CountOperations(ctx context.Context, accountID string) (int64, error)
	StreamOperations(ctx context.Context, accountID string, fn func(store.OperationRow) error) error
}

var _ Accounts = (*store.Accounts)(nil)

// Handlers serve /api/trade.
type Handlers struct {
	accounts Accounts
	sender   Sender
	db       platform.Pinger
	require  fiber.Handler
	now      func() time.Time
	routes   func() []server.Route
}

// NewHandlers builds the handlers. require authenticates the caller (the
// JWT middleware); routes lists the server's routes for /openapi.json.
func NewHandlers(accounts Accounts, sender Sender, db platform.Pinger, require fiber.Handler,
	now func() time.Time, routes func() []server.Route) (*Handlers, error) {
	if accounts == nil || sender == nil || db == nil || require == nil || now == nil || routes == nil {
		return nil, errors.New("trade handlers: nil dependency")
	}
	return &Handlers{accounts: accounts, sender: sender, db: db, require: require, now: now, routes: routes}, nil
}

// publicPaths are the routes that need no bearer token.
var publicPaths = map[string]bool{Prefix + "/health": true, Prefix + "/openapi.json": true}

// Register mounts the routes.
func (h *Handlers) Register(r server.Router) {
	g := r.Group(Prefix)
	g.Get("/health", "Liveness and database reachability", platform.Health(h.db, nil))
	g.Get("/openapi.json", "OpenAPI 3.0 slice of the test-net wallet", h.openapi)
	g.Get("/accounts", "The caller's test-net account (opened on first call)", h.require, h.listAccounts)
	g.Get("/accounts/lookup", "Find the account of a user by e-mail", h.require, h.lookup)
	g.Post("/topup", ratelimit.Money, "Top up the caller's account (at most 10000 TNU)", h.require, h.topUp)
	g.Post("/transfer", ratelimit.Money, "Transfer TNU from the caller's account to another", h.require, h.transfer)
	g.Get("/operations", "The caller's operations, newest first", h.require, h.listOperations)
	g.Get("/operations.csv", "Every operation of the caller's account as RFC 4180 CSV", h.require, h.operationsCSV)
}

// caller returns the authenticated user (require ran before).
func caller(c *fiber.Ctx) auth.Principal {
	p, _ := auth.User(c)
	return p
}

// Errors of the module.
var (
	errAccountNotFound = apierr.New(http.StatusNotFound, schemas.CodeAccountNotFound, "no such trade account")
)

// idPattern matches the ids accounts have (ksuids); anything else names no
// account.
var idPattern = regexp.MustCompile(`^[0-9A-Za-z]{1,64}$`)

// text checks a string field: NUL bytes and invalid UTF-8 are a validation
// failure. It returns the trimmed copy (fiber reuses the request buffers).
func text(v *bind.Validator, field, s string) string {
	if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
		v.Fail(field, "must be valid UTF-8 text without NUL bytes")
		return ""
	}
	return strings.Clone(strings.TrimSpace(s))
}

// amountField is an amount as sent: the raw JSON text, parsed exactly by
// schemas.ParseTNU (never through a float).
type amountField struct {
	raw string
	set bool
}

// UnmarshalJSON keeps the raw text of any JSON value.
func (a *amountField) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	*a = amountField{raw: s, set: s != "null"}
	return nil
}

// amount records a missing or invalid amount (or one over max units) and
// returns its units.
func amount(v *bind.Validator, field string, a amountField, max int64) int64 {
	if !a.set {
		v.Fail(field, "is required")
		return 0
	}
	units, err := schemas.ParseTNU(a.raw)
	switch {
	case err != nil:
		v.Fail(field, err.Error())
	case units > max:
		v.Fail(field, "must be at most "+schemas.FormatTNU(max))
	}
	return units
}
