// Package ledger serves /api/ledger: appends go through the ledger.append
// topic and its one appender; reads come from Postgres, except /stats, which
// comes from the ClickHouse copy.
package ledger

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/commands"
	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/platform"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/clickhouse"
	store "github.com/fintech/platform/storage/ledger"
)

// Prefix is where the module is mounted.
const Prefix = "/api/ledger"

// Reader is what the handlers read from the chain table.
type Reader interface {
	Head(ctx context.Context) (store.Head, store.Entry, bool, error)
	ByID(ctx context.Context, id string) (store.Context, error)
	List(ctx context.Context, f store.Filter) ([]store.Entry, error)
}

var _ Reader = (*store.Store)(nil)

// Verifier walks the chain.
type Verifier interface {
	Verify(ctx context.Context) (store.VerifyResult, error)
}

// Stats reads the rolling counts from the analytics copy.
type Stats interface {
	LedgerStats(ctx context.Context, now time.Time) (clickhouse.LedgerStats, error)
}

// Sender publishes a command and waits for its reply.
type Sender interface {
	Send(ctx context.Context, cmd commands.Command) (schemas.Reply, error)
}

// Config holds the handlers' options (none since the verification cache
// went: a verification walks only what was appended since the last one).
type Config struct{}

// Validate reports every problem of the options.
func (c Config) Validate() error { return nil }

// Handlers serve /api/ledger.
type Handlers struct {
	db        platform.Pinger
	reads     Reader
	verifier  Verifier
	analytics Stats
	bus       Sender
	authn     *auth.Authenticator
	now       func() time.Time
	routes    func() []server.Route
	cfg       Config
	// verifying admits one chain walk at a time; others wait their turn.
	verifying chan struct{}
}

// NewHandlers checks the dependencies and builds the handlers. routes lists
// the server's routes for /openapi.json.
func NewHandlers(db platform.Pinger, reads Reader, verifier Verifier, stats Stats, bus Sender, authn *auth.Authenticator,
	now func() time.Time, routes func() []server.Route, cfg Config) (*Handlers, error) {
	if db == nil || reads == nil || verifier == nil || stats == nil || bus == nil || authn == nil || now == nil || routes == nil {
		return nil, errors.New("ledger handlers: nil dependency")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Handlers{db: db, reads: reads, verifier: verifier, analytics: stats, bus: bus, authn: authn, now: now,
		routes: routes, cfg: cfg, verifying: make(chan struct{}, 1)}, nil
}

// Register mounts the routes. Each operation is declared with its request
// and answer types (server.Op): binding, validation and the OpenAPI slice
// come from these declarations. Reads are public; appends need a token.
func (h *Handlers) Register(r server.Router) {
	g := r.Group(Prefix).KeyArea("ledger")
	platform.BasicsOf(g, "ledger", platform.HealthOf(h.db, h.health), Health{}, openapi.Handler(h.routes, openapi.Doc{
		Title:       "Ledger",
		Description: "An append-only, hash-chained journal of platform events; every entry links to the hash of the one before it.",
		Prefixes:    []string{Prefix},
	}))
	server.Post(g, "/entries", server.Op[appendRequest]{
		Summary:     "Append an entry (platform-internal callers); prevHash is computed server-side",
		Description: "Appends an entry of a caller-defined kind to the hash chain; the platform computes prevHash and the hash. A replay of (kind, sourceId) answers the existing entry. Kinds the platform's modules emit are refused.",
		Class:       ratelimit.Write,
		Handle:      h.append,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "the appended entry", schemas.LedgerEntry{}),
			server.Answers(http.StatusOK, "replay: the entry this (kind, sourceId) already has", schemas.LedgerEntry{}),
			server.Fails(http.StatusForbidden, "forbidden: the kind is emitted by a platform module"),
			server.Fails(http.StatusConflict, "entry_exists or idempotency_key_reused: the entry id is taken, or the Idempotency-Key came with another body"),
		},
	}, h.authn.Require())
	server.Get(g, "/entries", server.Op[listRequest]{
		Summary:     "List entries in chain order; filters kind, actorUserId, since",
		Description: "Pages through the ledger in chain order, optionally of one kind, actor or since a time. Read-only.",
		Public:      true, Handle: h.list,
		Responses: []server.Response{server.Answers(http.StatusOK, "entries in chain order", schemas.Page[schemas.LedgerEntry]{})},
	})
	server.Get(g, "/entries/:id", server.Op[entryPath]{
		Summary:     "One entry with its hash chain context",
		Description: "One entry with the hashes before and after it. Read-only.",
		Public:      true, Handle: h.get,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the entry with its chain context", schemas.LedgerEntryInChain{}),
			server.Fails(http.StatusNotFound, "not_found: no ledger entry with this id"),
		},
	})
	server.Get(g, "/chain/head", server.Op[server.NoRequest]{
		Summary:     "The chain head",
		Description: "The newest entry's sequence number and hash. Read-only.",
		Public:      true, Handle: h.head,
		Responses: []server.Response{server.Answers(http.StatusOK, "the chain head", schemas.LedgerHead{})},
	})
	server.Get(g, "/chain/verify", server.Op[server.NoRequest]{
		Summary:     "Walk the chain and check every link",
		Description: "Recomputes every entry's hash and link and reports the first break, if any. Read-only.",
		Public:      true, Handle: h.verify,
		Responses: []server.Response{server.Answers(http.StatusOK, "the result of walking the chain", schemas.LedgerVerifyResult{})},
	})
	server.Get(g, "/stats", server.Op[server.NoRequest]{
		Summary:     "Rolling 24h, 7d, 30d entry counts by kind",
		Description: "Entry counts by kind over the last 24 hours, 7 and 30 days. Read-only.",
		Public:      true, Handle: h.stats,
		Responses: []server.Response{server.Answers(http.StatusOK, "rolling entry counts from the analytics copy", schemas.LedgerStats{})},
	})
}

// Health is the ledger's health answer: the chain height and the time of
// the last entry (null while the chain is empty).
type Health struct {
	platform.HealthAnswer
	LastEntryAt *string `json:"lastEntryAt" required:"true" format:"date-time"`
	Height      int64   `json:"height" required:"true" minimum:"0"`
}

func (h *Handlers) health(ctx context.Context, base platform.HealthAnswer) (Health, error) {
	head, _, _, err := h.reads.Head(ctx)
	if err != nil {
		return Health{}, err
	}
	out := Health{HealthAnswer: base, Height: head.Height}
	if head.Timestamp != nil {
		last := store.FormatTimestamp(*head.Timestamp)
		out.LastEntryAt = &last
	}
	return out, nil
}
