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
	"sync"
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

// Deps are the handlers' dependencies.
type Deps struct {
	DB       platform.Pinger
	Reads    Reader
	Verifier Verifier
	Stats    Stats
	Bus      Sender
	Tokens   *auth.Tokens
	Now      func() time.Time
	// Routes lists the registered routes, for the OpenAPI slice.
	Routes func() []server.Route
	// VerifyCache is how long a chain verification answers later calls at
	// the same chain head (LEDGER_VERIFY_CACHE); 0 walks the chain on every
	// call.
	VerifyCache time.Duration
}

// Handlers serve /api/ledger.
type Handlers struct {
	d Deps
	// verifying admits one chain walk at a time; others wait their turn.
	verifying chan struct{}

	mu       sync.Mutex
	verified *cachedVerify
}

// cachedVerify is the last verification and the head it covered.
type cachedVerify struct {
	height int64
	hash   string
	at     time.Time
	result store.VerifyResult
}

// NewHandlers checks the dependencies and builds the handlers.
func NewHandlers(d Deps) (*Handlers, error) {
	if d.DB == nil || d.Reads == nil || d.Verifier == nil || d.Stats == nil || d.Bus == nil || d.Tokens == nil || d.Now == nil {
		return nil, errors.New("ledger handlers: nil dependency")
	}
	return &Handlers{d: d, verifying: make(chan struct{}, 1)}, nil
}

// Register mounts the routes.
func (h *Handlers) Register(r server.Router) {
	g := r.Group(Prefix)
	g.Get("/health", "Liveness, database reachability, last entry timestamp", platform.Health(h.d.DB, h.health))
	g.Post("/entries", ratelimit.Write, "Append an entry (platform-internal callers)", h.d.Tokens.Require(), h.append)
	g.Get("/entries", "List entries; filters kind, actorUserId, since", h.list)
	g.Get("/entries/:id", "One entry with its hash chain context", h.get)
	g.Get("/chain/head", "The chain head", h.head)
	g.Get("/chain/verify", "Walk the chain and check every link", h.verify)
	g.Get("/stats", "Rolling 24h, 7d, 30d entry counts by kind", h.stats)
	g.Get("/openapi.json", "OpenAPI 3.0 slice of this module", openapi.Handler(h.d.Routes, openAPIDoc))
}

func (h *Handlers) health(ctx context.Context) (map[string]any, error) {
	head, _, _, err := h.d.Reads.Head(ctx)
	if err != nil {
		return nil, err
	}
	var last any
	if head.Timestamp != nil {
		last = store.FormatTimestamp(*head.Timestamp)
	}
	return map[string]any{"lastEntryAt": last, "height": head.Height}, nil
}

type appendRequest struct {
	Kind        string         `json:"kind"`
	SourceID    string         `json:"sourceId"`
	AmountCents bind.Amount    `json:"amountCents"`
	Currency    string         `json:"currency"`
	Meta        map[string]any `json:"meta"`
}

var currencyRE = regexp.MustCompile(`^[A-Z]{3,8}$`)

func noNUL(v *bind.Validator, field, s string) {
	v.Check(!strings.ContainsRune(s, 0), field, "must not contain NUL characters")
}

func (h *Handlers) append(c *fiber.Ctx) error {
	var req appendRequest
	if err := bind.JSON(c, &req); err != nil {
		return err
	}
	var v bind.Validator
	if v.Required("kind", req.Kind) {
		v.MaxLen("kind", req.Kind, schemas.LedgerMaxKind)
		noNUL(&v, "kind", req.Kind)
	}
	if v.Required("sourceId", req.SourceID) {
		v.MaxLen("sourceId", req.SourceID, schemas.LedgerMaxSourceID)
		noNUL(&v, "sourceId", req.SourceID)
	}
	var amount *int64
	if req.AmountCents.Set {
		n := v.Amount("amountCents", req.AmountCents)
		amount = &n
	}
	if req.Currency != "" {
		v.Check(currencyRE.MatchString(req.Currency), "currency", "must be an upper-case currency code such as KZT or USD")
	}
	if req.Meta != nil {
		if b, err := store.Canonical(req.Meta); err != nil || len(b) > schemas.LedgerMaxMeta {
			v.Fail("meta", "must be a JSON object of at most 64 KiB")
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	if schemas.IsModuleKind(req.Kind) {
		return apierr.New(http.StatusForbidden, apierr.CodeForbidden,
			"kind "+req.Kind+" is emitted by a platform module and cannot be posted")
	}
	p, _ := auth.User(c)
	env, err := schemas.New(schemas.TypeLedgerAppend, "", p.UserID, schemas.LedgerAppend{
		Kind: req.Kind, SourceID: req.SourceID, ActorUserID: p.UserID, AmountCents: amount,
		Currency: req.Currency, Meta: req.Meta, Scope: p.UserID}, h.d.Now())
	if err != nil {
		return err
	}
	return commands.Exchange(c, h.d.Bus, topics.LedgerAppend, env,
		commands.RequestIdempotency(c, p.UserID, "POST "+Prefix+"/entries"))
}

type listResponse struct {
	Items      []schemas.LedgerEntry `json:"items"`
	NextCursor *string               `json:"nextCursor"`
}

func (h *Handlers) list(c *fiber.Ctx) error {
	page, err := bind.PageQuery(c)
	if err != nil {
		return err
	}
	f := store.Filter{Kind: c.Query("kind"), ActorUserID: c.Query("actorUserId"), Limit: page.Limit}
	var v bind.Validator
	if page.After != "" {
		n, err := strconv.ParseInt(page.After, 10, 64)
		if err != nil || n < 0 {
			return apierr.InvalidCursor()
		}
		f.AfterHeight = n
	}
	if s := c.Query("since"); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		v.Check(err == nil, "since", "must be an ISO 8601 timestamp such as 2026-01-02T15:04:05Z")
		f.Since = &t
	}
	v.Check(utf8.ValidString(f.Kind) && !strings.ContainsRune(f.Kind, 0), "kind", "must be valid text")
	v.Check(utf8.ValidString(f.ActorUserID) && !strings.ContainsRune(f.ActorUserID, 0), "actorUserId", "must be valid text")
	if err := v.Err(); err != nil {
		return err
	}
	es, err := h.d.Reads.List(c.UserContext(), f)
	if err != nil {
		return err
	}
	out := listResponse{Items: make([]schemas.LedgerEntry, 0, len(es))}
	if len(es) > f.Limit {
		es = es[:f.Limit]
		cur := bind.Cursor(strconv.FormatInt(es[len(es)-1].Height, 10))
		out.NextCursor = &cur
	}
	for _, e := range es {
		out.Items = append(out.Items, e.JSON())
	}
	return c.JSON(out)
}

// chainContext is the neighbourhood of an entry in the chain.
type chainContext struct {
	PreviousID   *string `json:"previousId"`
	PreviousHash string  `json:"previousHash"`
	NextID       *string `json:"nextId"`
	NextHash     *string `json:"nextHash"`
	// Linked is true when the neighbours' stored hashes link to this entry.
	Linked bool `json:"linked"`
}

type entryResponse struct {
	schemas.LedgerEntry
	Chain chainContext `json:"chain"`
}

func (h *Handlers) get(c *fiber.Ctx) error {
	id := c.Params("id")
	if !utf8.ValidString(id) || strings.ContainsRune(id, 0) {
		return apierr.NotFound("no ledger entry with this id")
	}
	ec, err := h.d.Reads.ByID(c.UserContext(), id)
	if errors.Is(err, postgres.ErrNotFound) {
		return apierr.NotFound("no ledger entry with this id")
	}
	if err != nil {
		return err
	}
	out := entryResponse{LedgerEntry: ec.Entry.JSON(), Chain: chainContext{PreviousHash: store.GenesisPrevHash, Linked: true}}
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

type headResponse struct {
	ID        *string `json:"id"`
	Hash      string  `json:"hash"`
	Height    int64   `json:"height"`
	Timestamp *string `json:"timestamp"`
}

func (h *Handlers) head(c *fiber.Ctx) error {
	head, e, ok, err := h.d.Reads.Head(c.UserContext())
	if err != nil {
		return err
	}
	out := headResponse{Hash: head.Hash, Height: head.Height}
	if ok {
		ts := store.FormatTimestamp(e.Timestamp)
		out.ID, out.Timestamp = &e.ID, &ts
	}
	return c.JSON(out)
}

// verify answers the chain verification. A public caller cannot make the
// server walk the whole chain on every request: the result of the last walk
// answers while the chain head (height and hash) is the one it covered and
// it is younger than VerifyCache.
func (h *Handlers) verify(c *fiber.Ctx) error {
	ctx := c.UserContext()
	if res, ok, err := h.cachedVerify(ctx); err != nil || ok {
		if err != nil {
			return err
		}
		return c.JSON(res)
	}
	select {
	case h.verifying <- struct{}{}:
		defer func() { <-h.verifying }()
	case <-ctx.Done():
		return apierr.Unavailable()
	}
	// Another caller may have walked the chain while this one waited.
	if res, ok, err := h.cachedVerify(ctx); err != nil || ok {
		if err != nil {
			return err
		}
		return c.JSON(res)
	}
	started := h.d.Now()
	res, err := h.d.Verifier.Verify(ctx)
	if err != nil {
		return err
	}
	if h.d.VerifyCache > 0 {
		h.mu.Lock()
		h.verified = &cachedVerify{height: res.Height, hash: res.HeadHash, at: started, result: res}
		h.mu.Unlock()
	}
	return c.JSON(res)
}

// cachedVerify returns the cached result when it still covers the head.
func (h *Handlers) cachedVerify(ctx context.Context) (store.VerifyResult, bool, error) {
	if h.d.VerifyCache <= 0 {
		return store.VerifyResult{}, false, nil
	}
	h.mu.Lock()
	cached := h.verified
	h.mu.Unlock()
	if cached == nil || h.d.Now().Sub(cached.at) >= h.d.VerifyCache {
		return store.VerifyResult{}, false, nil
	}
	head, _, _, err := h.d.Reads.Head(ctx)
	if err != nil {
		return store.VerifyResult{}, false, err
	}
	if head.Height != cached.height || head.Hash != cached.hash {
		return store.VerifyResult{}, false, nil
	}
	return cached.result, true, nil
}

type statsResponse struct {
	clickhouse.LedgerStats
	AsOf   string `json:"asOf"`
	Source string `json:"source"`
}

func (h *Handlers) stats(c *fiber.Ctx) error {
	now := h.d.Now().UTC()
	st, err := h.d.Stats.LedgerStats(c.UserContext(), now)
	if err != nil {
		return apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "ledger statistics are unavailable; retry shortly")
	}
	return c.JSON(statsResponse{LedgerStats: st, AsOf: now.Truncate(time.Second).Format(time.RFC3339), Source: "clickhouse"})
}
