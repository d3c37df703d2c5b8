// Package ledger serves /api/ledger: appends go through the ledger.append
// topic and its one appender; reads come from Postgres, except /stats, which
// comes from the ClickHouse copy.
package ledger

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/commands"
	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/platform"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/clickhouse"
	store "github.com/fintech/platform/storage/ledger"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/topics"
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
	tokens    *auth.Tokens
	now       func() time.Time
	routes    func() []server.Route
	cfg       Config
	// verifying admits one chain walk at a time; others wait their turn.
	verifying chan struct{}
}

// NewHandlers checks the dependencies and builds the handlers. routes lists
// the server's routes for /openapi.json.
func NewHandlers(db platform.Pinger, reads Reader, verifier Verifier, stats Stats, bus Sender, tokens *auth.Tokens,
	now func() time.Time, routes func() []server.Route, cfg Config) (*Handlers, error) {
	if db == nil || reads == nil || verifier == nil || stats == nil || bus == nil || tokens == nil || now == nil || routes == nil {
		return nil, errors.New("ledger handlers: nil dependency")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Handlers{db: db, reads: reads, verifier: verifier, analytics: stats, bus: bus, tokens: tokens, now: now,
		routes: routes, cfg: cfg, verifying: make(chan struct{}, 1)}, nil
}

// Register mounts the routes. Each operation is declared with its request
// and answer types (server.Op): binding, validation and the OpenAPI slice
// come from these declarations. Reads are public; appends need a token.
func (h *Handlers) Register(r server.Router) {
	g := r.Group(Prefix)
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
	}, h.tokens.Require())
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

// appendRequest is the body of POST /entries.
type appendRequest struct {
	Kind        string         `json:"kind" required:"true" minLength:"1" maxLength:"64" description:"a kind of the caller's own; module namespaces (fiat:, mask:, gov:, …) are refused"`
	SourceID    string         `json:"sourceId" required:"true" minLength:"1" maxLength:"256"`
	AmountCents bind.Amount    `json:"amountCents"`
	Currency    string         `json:"currency" pattern:"^[A-Z]{3,8}$"`
	Meta        map[string]any `json:"meta" description:"at most 64 KiB of JSON"`
}

var currencyRE = regexp.MustCompile(`^[A-Z]{3,8}$`)

func noNUL(v *bind.Validator, field, s string) {
	v.Check(!strings.ContainsRune(s, 0), field, "must not contain NUL characters")
}

// Validate checks what only the request has (the amount as sent, the meta
// object's size) and the entry's own rule (schemas.LedgerAppend.Validate),
// reporting every field at once.
func (req *appendRequest) Validate() error {
	var v bind.Validator
	if req.AmountCents.Set {
		v.Amount("amountCents", req.AmountCents)
	}
	if req.Meta != nil {
		if b, err := store.Canonical(req.Meta); err != nil || len(b) > schemas.LedgerMaxMeta {
			v.Fail("meta", "must be a JSON object of at most 64 KiB")
		}
	}
	var problems schemas.FieldProblems
	if errors.As(req.entry("").Validate(), &problems) {
		for field, reason := range problems {
			v.Fail(field, reason)
		}
	}
	return v.Err()
}

// entry is the entry the request asks actor to chain.
func (req *appendRequest) entry(actor string) schemas.LedgerAppend {
	var amount *int64
	if req.AmountCents.Set {
		amount = &req.AmountCents.Value
	}
	return schemas.LedgerAppend{Kind: req.Kind, SourceID: req.SourceID, ActorUserID: actor, AmountCents: amount,
		Currency: req.Currency, Meta: req.Meta, Scope: actor}
}

// append queues the entry for the one appender and answers its reply.
func (h *Handlers) append(c *fiber.Ctx, req *appendRequest) error {
	if schemas.IsModuleKind(req.Kind) {
		return apierr.New(http.StatusForbidden, apierr.CodeForbidden,
			"kind "+req.Kind+" is emitted by a platform module and cannot be posted")
	}
	p, _ := auth.User(c)
	env, err := schemas.New(schemas.TypeLedgerAppend, "", p.UserID, req.entry(p.UserID), h.now())
	if err != nil {
		return err
	}
	return commands.Exchange(c, h.bus, topics.LedgerAppend, env,
		commands.RequestIdempotency(c, p.UserID, "POST "+Prefix+"/entries"))
}

// listRequest is the query of GET /entries.
type listRequest struct {
	bind.Paging
	Kind        string `query:"kind" json:"-" description:"only entries of this kind"`
	ActorUserID string `query:"actorUserId" json:"-" description:"only entries of this actor"`
	Since       string `query:"since" json:"-" format:"date-time" description:"only entries at or after this time"`
	afterHeight int64
	since       *time.Time
}

// Validate reads the page (its cursor holds a chain height) and the
// filters.
func (req *listRequest) Validate() error {
	if err := req.Paging.Validate(); err != nil {
		return err
	}
	if after := req.Page().After; after != "" {
		n, err := strconv.ParseInt(after, 10, 64)
		if err != nil || n < 0 {
			return apierr.InvalidCursor()
		}
		req.afterHeight = n
	}
	var v bind.Validator
	if req.Since != "" {
		t, err := time.Parse(time.RFC3339Nano, req.Since)
		v.Check(err == nil, "since", "must be an ISO 8601 timestamp such as 2026-01-02T15:04:05Z")
		req.since = &t
	}
	v.Check(utf8.ValidString(req.Kind) && !strings.ContainsRune(req.Kind, 0), "kind", "must be valid text")
	v.Check(utf8.ValidString(req.ActorUserID) && !strings.ContainsRune(req.ActorUserID, 0), "actorUserId", "must be valid text")
	return v.Err()
}

// list answers entries in chain order, a page at a time.
func (h *Handlers) list(c *fiber.Ctx, req *listRequest) error {
	limit := req.Page().Limit
	es, err := h.reads.List(c.UserContext(), store.Filter{Kind: req.Kind, ActorUserID: req.ActorUserID,
		AfterHeight: req.afterHeight, Since: req.since, Limit: limit})
	if err != nil {
		return err
	}
	return c.JSON(bind.PageOf(es, limit, func(e store.Entry) string { return strconv.FormatInt(e.Height, 10) },
		func(e store.Entry) schemas.LedgerEntry { return e.JSON() }))
}

// entryPath is the request of GET /entries/:id.
type entryPath struct {
	ID string `path:"id" json:"-" format:"ksuid"`
}

// get answers one entry with its neighbours in the chain.
func (h *Handlers) get(c *fiber.Ctx, req *entryPath) error {
	id := req.ID
	if !utf8.ValidString(id) || strings.ContainsRune(id, 0) {
		return apierr.NotFound("no ledger entry with this id")
	}
	ec, err := h.reads.ByID(c.UserContext(), id)
	if errors.Is(err, postgres.ErrNotFound) {
		return apierr.NotFound("no ledger entry with this id")
	}
	if err != nil {
		return err
	}
	out := schemas.LedgerEntryInChain{LedgerEntry: ec.Entry.JSON(),
		Chain: schemas.LedgerChainContext{PreviousHash: store.GenesisPrevHash, Linked: true}}
	if p := ec.Previous; p != nil {
		out.Chain.PreviousID, out.Chain.PreviousHash = &p.ID, p.Hash
	}
	out.Chain.Linked = out.Chain.PreviousHash == ec.Entry.PrevHash
	if n := ec.Next; n != nil {
		out.Chain.NextID, out.Chain.NextHash = &n.ID, &n.Hash
		out.Chain.Linked = out.Chain.Linked && n.PrevHash == ec.Entry.Hash
	}
	return c.JSON(out)
}

// head answers the chain head.
func (h *Handlers) head(c *fiber.Ctx, _ *server.NoRequest) error {
	head, e, ok, err := h.reads.Head(c.UserContext())
	if err != nil {
		return err
	}
	out := schemas.LedgerHead{Hash: head.Hash, Height: head.Height}
	if ok {
		ts := store.FormatTimestamp(e.Timestamp)
		out.ID, out.Timestamp = &e.ID, &ts
	}
	return c.JSON(out)
}

// verify answers the chain verification. A public caller cannot make the
// server walk the whole chain: the verifier walks only the entries appended
// since the last verified head (the whole chain is walked in the
// background, on a schedule), one walk at a time.
func (h *Handlers) verify(c *fiber.Ctx, _ *server.NoRequest) error {
	ctx := c.UserContext()
	select {
	case h.verifying <- struct{}{}:
		defer func() { <-h.verifying }()
	case <-ctx.Done():
		return apierr.Unavailable()
	}
	res, err := h.verifier.Verify(ctx)
	if err != nil {
		return err
	}
	return c.JSON(res)
}

// stats answers the rolling counts from the analytics copy; 503 when it
// does not answer.
func (h *Handlers) stats(c *fiber.Ctx, _ *server.NoRequest) error {
	now := h.now().UTC()
	st, err := h.analytics.LedgerStats(c.UserContext(), now)
	if err != nil {
		return apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "ledger statistics are unavailable; retry shortly")
	}
	out := schemas.LedgerStats{Totals: windows(st.Totals), ByKind: make(map[string]schemas.LedgerWindows, len(st.ByKind)),
		AsOf: now.Truncate(time.Second).Format(time.RFC3339), Source: "clickhouse"}
	for k, w := range st.ByKind {
		out.ByKind[k] = windows(w)
	}
	return c.JSON(out)
}

func windows(w clickhouse.Windows) schemas.LedgerWindows {
	return schemas.LedgerWindows{Last24h: w.Last24h, Last7d: w.Last7d, Last30d: w.Last30d}
}
