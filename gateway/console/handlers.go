// Package console serves the admin console: the /admin page (charts drawn
// in the browser with the vendored uPlot, data fetched with the admin's
// bearer token) and its data routes under /api/platform/admin, including the
// dead-letter tooling. Every data route checks the token and the admin role
// on the server; the page itself holds no data.
package console

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/swaggest/jsonschema-go"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/dlq"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/clickhouse"
	"github.com/fintech/platform/topics"
)

// Prefix is where the console's data routes are mounted.
const Prefix = "/api/platform/admin"

// PagePath is the console page.
const PagePath = "/admin"

// Analytics reads the money flow from the ClickHouse copy.
type Analytics interface {
	Flow(ctx context.Context, since time.Time) (clickhouse.Flow, error)
}

// Lags reads consumer group lag from the broker.
type Lags interface {
	GroupLags(ctx context.Context, groups ...string) (map[string]int64, error)
}

// Deliveries counts webhook deliveries by status.
type Deliveries interface {
	CountDeliveriesByStatus(ctx context.Context) (map[string]int64, error)
}

// LiveFlow is the money flow counted from the event stream, and the latest
// events it read.
type LiveFlow interface {
	Flow(ctx context.Context) (clickhouse.Flow, time.Time)
	Recent(ctx context.Context) []schemas.ConsoleEvent
}

var (
	_ Analytics = (*clickhouse.Analytics)(nil)
	_ Lags      = (*topics.Ops)(nil)
	_ LiveFlow  = (*Live)(nil)
)

// Window is how far back the flow charts reach.
const Window = 5 * time.Minute

// Handlers serve the console.
type Handlers struct {
	dlq        *dlq.Tooling
	analytics  Analytics
	live       LiveFlow
	lags       Lags
	deliveries Deliveries
	audits     Audits
	slow       SlowView
	authn      *auth.Authenticator
	admin      fiber.Handler
	now        func() time.Time
	// life bounds the live tap: the server's lifetime.
	life context.Context

	// copyMu guards the last read of the ClickHouse copy, shared by every
	// console for copyTTL: the live stream covers the seconds since.
	copyMu   sync.Mutex
	copyAt   time.Time
	copyFlow clickhouse.Flow
}

// copyTTL is how long a read of the ClickHouse copy serves the charts.
const copyTTL = 5 * time.Second

// NewHandlers checks the dependencies. admin admits only fiat admins (the
// console's lists and actions are the fiat admin routes'); life ends when
// the server shuts down.
func NewHandlers(life context.Context, tooling *dlq.Tooling, analytics Analytics, live LiveFlow, lags Lags, deliveries Deliveries,
	audits Audits, slow SlowView, authn *auth.Authenticator, admin fiber.Handler, now func() time.Time) (*Handlers, error) {
	if life == nil || tooling == nil || analytics == nil || live == nil || lags == nil || deliveries == nil ||
		audits == nil || slow.Source == nil || authn == nil || admin == nil || now == nil {
		return nil, errors.New("console handlers: nil dependency")
	}
	return &Handlers{dlq: tooling, analytics: analytics, live: live, lags: lags, deliveries: deliveries,
		audits: audits, slow: slow, authn: authn, admin: admin, now: now, life: life}, nil
}

// adminRole is the role of the data routes.
const adminRole = "fiat admin"

// Register mounts the page, its script and the data routes.
func (h *Handlers) Register(r server.Router) {
	registerPage(r)
	g := r.Group(Prefix).KeyArea(server.NoKeys) // the operators' console
	tok := h.authn.Require()
	server.Get(g, "/throughput", server.Op[server.NoRequest]{
		Summary:     "Transfers per second and volume per currency over the last five minutes (fiat admin)",
		Description: "One point per second: completed transfers and the transferred amount per currency (minor units), from the ClickHouse copy and, for the seconds it has not caught up with, the live event stream. Read-only.",
		Role:        adminRole,
		Handle:      h.throughput,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "one point per second: the ClickHouse copy, and the event stream for the seconds it has not caught up with", schemas.ConsoleThroughput{}),
		},
	}, tok, h.admin)
	server.Get(g, "/events", server.Op[server.NoRequest]{
		Summary:     "The latest fiat events from the event stream (fiat admin)",
		Description: "The last 50 events.fiat events the console's live tap read, newest first, each with its data as JSON text. Read-only.",
		Role:        adminRole, Handle: h.events,
		Responses: []server.Response{server.Answers(http.StatusOK, "the latest events, newest first", schemas.ConsoleEvents{})},
	}, tok, h.admin)
	server.Get(g, "/lag", server.Op[server.NoRequest]{
		Summary:     "Consumer lag per group, from the broker (fiat admin)",
		Description: "For every consumer group, the records of its topics it has not yet committed past, read from the broker. Read-only.",
		Role:        adminRole, Handle: h.lag,
		Responses: []server.Response{server.Answers(http.StatusOK, "every consumer group's lag", schemas.ConsoleLag{})},
	}, tok, h.admin)
	server.Get(g, "/parked", server.Op[server.NoRequest]{
		Summary:     "Parked records per DLQ topic (fiat admin)",
		Description: "For every <topic>.dlq topic, the records it holds and those no operator replayed or discarded. Read-only.",
		Role:        adminRole, Handle: h.parked,
		Responses: []server.Response{server.Answers(http.StatusOK, "every DLQ topic's counts", schemas.ConsoleParked{})},
	}, tok, h.admin)
	server.Get(g, "/deliveries", server.Op[server.NoRequest]{
		Summary:     "Webhook deliveries per state (fiat admin)",
		Description: "The number of outbound webhook deliveries pending, failed, delivered and dead-lettered. Read-only.",
		Role:        adminRole, Handle: h.deliveryCounts,
		Responses: []server.Response{server.Answers(http.StatusOK, "the count of every state", schemas.ConsoleDeliveries{})},
	}, tok, h.admin)
	h.registerAudit(g, tok, h.admin)
	h.registerSlow(g, tok, h.admin)
	server.Get(g, "/dlq", server.Op[listDLQRequest]{
		Summary:     "Records parked on the DLQ topics (fiat admin)",
		Description: "Pages through the records the consumers parked (unreadable, or failed on their own), with their error, key, command id, first-seen time, what operators decided and, for a replay parked again, the record it replays (replayOf). Read-only.",
		Role:        adminRole, Handle: h.listDLQ,
		Responses: []server.Response{server.Answers(http.StatusOK, "parked records in topic, partition and offset order", schemas.Page[schemas.DLQRecord]{})},
	}, tok, h.admin)
	server.Get(g, "/dlq/:record", server.Op[dlqPath]{
		Summary:     "One parked record and every decision about it (fiat admin)",
		Description: "The record as listed, with every replay and discard of it from the dead letters' audit log, oldest first. Read-only.",
		Role:        adminRole, Handle: h.showDLQ,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the record and its decisions", schemas.DLQRecordDetail{}),
			server.Fails(http.StatusNotFound, "not_found: no such parked record"),
		},
	}, tok, h.admin)
	server.Post(g, "/dlq/:record/replay", server.Op[dlqPath]{
		Summary:     "Publish a parked record again to its source topic, with its command id (fiat admin)",
		Description: "Publishes the parked record again to its source topic with the same envelope, so a command applied meanwhile (or by an earlier replay) is not applied again; the record is marked replayed and the replay is audited. A replay parked again names this record in replayOf.",
		Class:       ratelimit.Write, Role: adminRole, Handle: h.replay,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the record, replayed: a command applied before is not applied again", schemas.DLQRecord{}),
			server.Fails(http.StatusNotFound, "not_found: no such parked record"),
		},
	}, tok, h.admin)
	server.Post(g, "/dlq/:record/discard", server.Op[dlqPath]{
		Summary:     "Mark a parked record as not to be replayed (fiat admin)",
		Description: "Marks the parked record discarded and audits it; the record stays on its DLQ topic. A replayed record cannot be discarded.",
		Class:       ratelimit.Write, Role: adminRole, Handle: h.discard,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the record, discarded", schemas.DLQRecord{}),
			server.Fails(http.StatusNotFound, "not_found: no such parked record"),
			server.Fails(http.StatusConflict, "invalid_state: the record was replayed"),
		},
	}, tok, h.admin)
}

// throughput merges the ClickHouse copy with the live stream per second:
// each source can only miss transfers (the copy lags by a second or so; the
// stream started reading at some point), never count one twice, so the
// larger of the two is the better count.
func (h *Handlers) throughput(c *fiber.Ctx, _ *server.NoRequest) error {
	now := h.now().UTC().Truncate(time.Second)
	since := now.Add(-Window)
	out := schemas.ConsoleThroughput{Seconds: []int64{}, Transfers: []int64{}, Volume: []schemas.ConsoleCurrencySeries{}, Sources: []string{}}
	ch, err := h.copyOf(c.UserContext(), now)
	if err == nil {
		out.Sources = append(out.Sources, "clickhouse")
	}
	live, started := h.live.Flow(h.life)
	if !started.IsZero() {
		out.Sources = append(out.Sources, "stream")
	}
	if err != nil && started.IsZero() {
		return apierr.New(http.StatusServiceUnavailable, schemas.CodeAnalyticsUnavailable,
			"neither the ClickHouse copy nor the event stream answered; try again")
	}
	// The wallet currencies are always drawn, with or without transfers.
	currencies := map[string]bool{"KZT": true, "USD": true}
	for cur := range ch.Volume {
		currencies[cur] = true
	}
	for cur := range live.Volume {
		currencies[cur] = true
	}
	vol := map[string][]int64{}
	for s := since.Unix(); s <= now.Unix(); s++ {
		out.Seconds = append(out.Seconds, s)
		out.Transfers = append(out.Transfers, max(ch.Transfers[s], live.Transfers[s]))
		for cur := range currencies {
			vol[cur] = append(vol[cur], max(ch.Volume[cur][s], live.Volume[cur][s]))
		}
	}
	for _, cur := range sortedKeys(currencies) {
		out.Volume = append(out.Volume, schemas.ConsoleCurrencySeries{Currency: cur, Minor: vol[cur]})
	}
	return c.JSON(out)
}

// copyOf returns the flow of the window ending at now from the ClickHouse
// copy, read at most every copyTTL.
func (h *Handlers) copyOf(ctx context.Context, now time.Time) (clickhouse.Flow, error) {
	h.copyMu.Lock()
	defer h.copyMu.Unlock()
	if !h.copyAt.IsZero() && now.Sub(h.copyAt) < copyTTL {
		return h.copyFlow, nil
	}
	f, err := h.analytics.Flow(ctx, now.Add(-Window))
	if err != nil {
		return clickhouse.Flow{}, err
	}
	h.copyAt, h.copyFlow = now, f
	return f, nil
}

func (h *Handlers) events(c *fiber.Ctx, _ *server.NoRequest) error {
	return c.JSON(schemas.ConsoleEvents{Events: h.live.Recent(h.life)})
}

func (h *Handlers) lag(c *fiber.Ctx, _ *server.NoRequest) error {
	lags, err := h.lags.GroupLags(c.UserContext(), topics.Groups()...)
	if err != nil {
		return err
	}
	out := schemas.ConsoleLag{Groups: []schemas.ConsoleGroupLag{}, At: h.now().UTC()}
	for _, g := range topics.Groups() {
		out.Groups = append(out.Groups, schemas.ConsoleGroupLag{Group: g, Lag: lags[g]})
	}
	return c.JSON(out)
}

func (h *Handlers) parked(c *fiber.Ctx, _ *server.NoRequest) error {
	out, err := h.dlq.Parked(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(out)
}

func (h *Handlers) deliveryCounts(c *fiber.Ctx, _ *server.NoRequest) error {
	counts, err := h.deliveries.CountDeliveriesByStatus(c.UserContext())
	if err != nil {
		return err
	}
	out := schemas.ConsoleDeliveries{States: []schemas.ConsoleStateCount{}, At: h.now().UTC()}
	for _, s := range sortedKeys(counts) {
		out.States = append(out.States, schemas.ConsoleStateCount{State: s, Count: counts[s]})
	}
	return c.JSON(out)
}

// listDLQRequest is the query of GET /dlq.
type listDLQRequest struct {
	bind.Paging
	Topic dlqTopicName `query:"topic" json:"-"`
}

// dlqTopicName is a DLQ topic or a source topic that has one.
type dlqTopicName string

// PrepareJSONSchema lists the topics the filter takes.
func (dlqTopicName) PrepareJSONSchema(s *jsonschema.Schema) error {
	var names []any
	for _, t := range topics.DLQTopics() {
		names = append(names, strings.TrimSuffix(t, ".dlq"), t)
	}
	s.WithType(jsonschema.String.Type()).WithEnum(names...).
		WithDescription("one DLQ topic (fiat.commands.dlq) or its source topic (fiat.commands); all when absent")
	return nil
}

// Validate reads the page and checks the topic.
func (req *listDLQRequest) Validate() error {
	if err := req.Paging.Validate(); err != nil {
		return err
	}
	if req.Topic != "" {
		if _, err := dlq.Topic(string(req.Topic)); err != nil {
			return apierr.Validation(map[string]string{"topic": "must be a topic with a DLQ, or a DLQ topic"})
		}
	}
	if after := req.Page().After; after != "" {
		if !dlq.ValidID(after) {
			return apierr.InvalidCursor()
		}
	}
	return nil
}

func (h *Handlers) listDLQ(c *fiber.Ctx, req *listDLQRequest) error {
	page := req.Page()
	rows, err := h.dlq.List(c.UserContext(), string(req.Topic), page.After, page.Limit)
	if err != nil {
		return err
	}
	return c.JSON(bind.PageOf(rows, page.Limit, func(r schemas.DLQRecord) string { return r.ID },
		func(r schemas.DLQRecord) schemas.DLQRecord { return r }))
}

// dlqPath names one parked record.
type dlqPath struct {
	ID string `path:"record" json:"-" description:"the record id, <dlq topic>:<partition>:<offset>; anything else names no record (404)"`
}

func (h *Handlers) showDLQ(c *fiber.Ctx, req *dlqPath) error {
	shown, err := h.dlq.Show(c.UserContext(), req.ID)
	if err != nil {
		return dlqError(err)
	}
	out := schemas.DLQRecordDetail{Record: shown.Record, Decisions: make([]schemas.DLQDecision, len(shown.History))}
	for i, a := range shown.History {
		out.Decisions[i] = schemas.DLQDecision{Action: a.Action, Actor: a.Actor, Detail: a.Detail, At: a.CreatedAt.UTC()}
	}
	return c.JSON(out)
}

func (h *Handlers) replay(c *fiber.Ctx, req *dlqPath) error {
	out, err := h.dlq.Replay(c.UserContext(), req.ID, actor(c))
	if err != nil {
		return dlqError(err)
	}
	return c.JSON(out)
}

func (h *Handlers) discard(c *fiber.Ctx, req *dlqPath) error {
	out, err := h.dlq.Discard(c.UserContext(), req.ID, actor(c))
	if err != nil {
		return dlqError(err)
	}
	return c.JSON(out)
}

// actor names the admin in the audit log, as the fiat admin routes do.
func actor(c *fiber.Ctx) string {
	p, _ := auth.User(c)
	return "admin:" + p.UserID
}

// dlqError maps the tooling's errors to the API's.
func dlqError(err error) error {
	switch {
	case errors.Is(err, dlq.ErrUnknownRecord):
		return apierr.NotFound("no such parked record")
	case errors.Is(err, dlq.ErrInvalidState):
		return apierr.New(http.StatusConflict, schemas.CodeInvalidState,
			"the record was replayed; it cannot be replayed again or discarded")
	}
	return err
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
