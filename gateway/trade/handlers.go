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
	"github.com/swaggest/jsonschema-go"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/commands"
	"github.com/fintech/platform/gateway/openapi"
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
	Operations(ctx context.Context, accountID string, after schemas.Position, limit int) ([]store.OperationRow, error)
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

// Register mounts the routes. Each operation is declared with its request
// and answer types (server.Op): binding, validation and the OpenAPI slice
// come from these declarations.
func (h *Handlers) Register(r server.Router) {
	g := r.Group(Prefix).KeyArea("trade")
	type resp = server.Response
	answers, fails := server.Answers, server.Fails
	keyReused := fails(http.StatusConflict, "idempotency_key_reused: the Idempotency-Key came with another body")
	platform.Basics(g, "test-net wallet", platform.Health(h.db, nil), openapi.Handler(h.routes, openapi.Doc{
		Title: "Test-net wallet",
		Description: "Accounts in the test-net unit TNU. Amounts are JSON numbers with at most 7 decimal places, " +
			"stored exactly as integers of 10^-7 TNU.",
		Prefixes: []string{Prefix},
	}))
	server.Get(g, "/accounts", server.Op[listAccountsRequest]{
		Summary:     "The caller's test-net account (opened on first call)",
		Description: "The caller's test-net account and balance; the first call opens it.",
		Handle:      h.listAccounts,
		Responses:   []resp{answers(http.StatusOK, "the caller's account", schemas.TradeAccountList{})},
	}, h.require)
	server.Get(g, "/accounts/lookup", server.Op[lookupRequest]{
		Summary:     "Find the account of a user by e-mail",
		Description: "The test-net account of the user with that e-mail, to transfer to. Read-only.",
		Handle:      h.lookup,
		Responses: []resp{
			answers(http.StatusOK, "the account of that e-mail", schemas.TradeAccountLookup{}),
			fails(http.StatusNotFound, "account_not_found: no user with that e-mail has opened an account"),
		},
	}, h.require)
	server.Post(g, "/topup", server.Op[topUpRequest]{
		Summary:     "Top up the caller's account (at most 10000 TNU)",
		Description: "Credits test-net units (TNU, no real value) to the caller's account, at most 10000 TNU per top-up. Records an operation.",
		Class:       ratelimit.Money, Handle: h.topUp,
		Responses: []resp{
			answers(http.StatusOK, "the account after the top-up", schemas.TradeTopUpResult{}),
			fails(http.StatusNotFound, "account_not_found: not an account of the caller"),
			keyReused,
		},
	}, h.require)
	server.Post(g, "/transfer", server.Op[transferRequest]{
		Summary:     "Transfer TNU from the caller's account to another",
		Description: "Moves TNU from the caller's account to another account. Debits the caller, credits the other, records the operation.",
		Class:       ratelimit.Money, Handle: h.transfer,
		Responses: []resp{
			answers(http.StatusCreated, "the transfer", schemas.TradeTransferResult{}),
			fails(http.StatusBadRequest, "insufficient_balance: the account holds less than the amount"),
			fails(http.StatusNotFound, "account_not_found: from is not the caller's account, or to does not exist"),
			keyReused,
		},
	}, h.require)
	server.Get(g, "/operations", server.Op[listOperationsRequest]{
		Summary:     "The caller's operations, newest first",
		Description: "Pages through the operations of the caller's account, newest first. Read-only.",
		Handle:      h.listOperations,
		Responses:   []resp{answers(http.StatusOK, "the caller's operations", schemas.TradeOperationList{})},
	}, h.require)
	server.Get(g, "/operations.csv", server.Op[server.NoRequest]{
		Summary:     "Every operation of the caller's account as RFC 4180 CSV",
		Description: "Every operation of the caller's account as an RFC 4180 CSV download. Read-only.",
		Handle:      h.operationsCSV,
		Responses: []resp{{Status: http.StatusOK, ContentType: "text/csv",
			Description: "RFC 4180 CSV with CRLF line ends: id,kind,amount,from,to,createdAt, newest first"}},
	}, h.require)
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

// topUpAmount is the amount of a top-up: at most 10,000 TNU.
type topUpAmount struct{ amountField }

// transferAmount is the amount of a transfer: at most 10^11 TNU.
type transferAmount struct{ amountField }

// PrepareJSONSchema describes a top-up amount as what a client must send.
func (topUpAmount) PrepareJSONSchema(s *jsonschema.Schema) error {
	return describeAmount(s, schemas.MaxTopUp)
}

// PrepareJSONSchema describes a transfer amount as what a client must send.
func (transferAmount) PrepareJSONSchema(s *jsonschema.Schema) error {
	return describeAmount(s, schemas.MaxTNU)
}

// describeAmount describes an amount as what a client must send: a
// positive JSON number with at most 7 decimal places, without an exponent,
// of at most max units.
func describeAmount(s *jsonschema.Schema, max int64) error {
	s.WithType(jsonschema.Number.Type()).WithMinimum(0).WithExclusiveMinimum(0).WithMaximum(float64(max / schemas.TNUScale)).
		WithMultipleOf(0.0000001).
		WithDescription("TNU: a JSON number greater than 0 with at most 7 decimal places, written without an exponent")
	s.Properties, s.Required = nil, nil
	return nil
}

// UnmarshalJSON keeps the raw text of any JSON value.
func (a *amountField) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	*a = amountField{raw: s, set: s != "null"}
	return nil
}

// problem says why the amount is refused (not a JSON number of at most 7
// decimals, not positive, over max units), "" when it is not; the binder
// asks it through Present and Invalid.
func (a amountField) problem(max int64) string {
	units, err := schemas.ParseTNU(a.raw)
	switch {
	case err != nil:
		return err.Error()
	case units > max:
		return "must be at most " + schemas.FormatTNU(max)
	}
	return ""
}

// units is the amount the binder accepted.
func (a amountField) units() schemas.TNU {
	u, _ := schemas.ParseTNU(a.raw)
	return schemas.TNU(u)
}

// Present reports whether the amount was sent.
func (a amountField) Present() bool { return a.set }

// Invalid says why a top-up amount is refused.
func (a topUpAmount) Invalid() string { return a.problem(schemas.MaxTopUp) }

// Invalid says why a transfer amount is refused.
func (a transferAmount) Invalid() string { return a.problem(schemas.MaxTNU) }
