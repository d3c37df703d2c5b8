// Package partner serves the partner rails: the signed webhook receivers of
// the royalty (rights), tournament prize (chess) and certification payout
// (cert) partners, the callers' read endpoints, the public tournament
// schedule and the aggregated earnings under /api/ecosystem.
//
// The write rate is low and nothing moves money, so the receivers write
// Postgres directly (row and its events.partner event in one transaction)
// instead of going through a command topic. Records are kept by the
// lower-cased e-mail the partner reported and shown to whoever holds that
// e-mail, also when the account is registered later.
package partner

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/platform"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	store "github.com/fintech/platform/storage/partner"
	"github.com/fintech/platform/storage/pipeline"
)

// Path prefixes of the partner rails.
const (
	PrefixRights    = "/api/rights"
	PrefixChess     = "/api/chess"
	PrefixCert      = "/api/cert"
	PrefixEcosystem = "/api/ecosystem"
)

// Recorder records what the partners report.
type Recorder interface {
	RecordRoyalty(ctx context.Context, r store.RoyaltyRow, event store.EventFunc[store.RoyaltyRow]) (store.RoyaltyRow, bool, error)
	RecordPodium(ctx context.Context, entries []store.PrizeRow, event store.EventFunc[store.PrizeRow]) (recorded, replayed []store.PrizeRow, err error)
	PublishTournament(ctx context.Context, t store.TournamentRow, at time.Time, event func(store.TournamentRow) (pipeline.OutboxRow, error)) (store.TournamentRow, store.Publication, error)
	RecordCertPayout(ctx context.Context, p store.CertPayoutRow, event store.EventFunc[store.CertPayoutRow]) (store.CertPayoutRow, bool, error)
}

// Reader is what the read endpoints need, always for one e-mail.
type Reader interface {
	Royalties(ctx context.Context, email, after string, limit int) ([]store.RoyaltyRow, int64, error)
	Prizes(ctx context.Context, email, after string, limit int) ([]store.PrizeRow, int64, error)
	CertPayouts(ctx context.Context, email, after string, limit int) ([]store.CertPayoutRow, int64, error)
	Upcoming(ctx context.Context, now time.Time, limit int) ([]store.TournamentRow, error)
	CertStats(ctx context.Context, email string) (store.CertStats, error)
	Earnings(ctx context.Context, email string) (store.Earnings, error)
}

var (
	_ Recorder = (*store.Store)(nil)
	_ Reader   = (*store.Store)(nil)
)

// Handlers serve the partner rails.
type Handlers struct {
	rec     Recorder
	reader  Reader
	db      platform.Pinger
	require fiber.Handler
	secrets Secrets
	now     func() time.Time
	routes  func() []server.Route
}

// NewHandlers builds the handlers. require authenticates JWT callers;
// secrets authenticate the partners' deliveries; routes lists the server's
// routes for the OpenAPI slices.
func NewHandlers(rec Recorder, reader Reader, db platform.Pinger, require fiber.Handler, secrets Secrets,
	now func() time.Time, routes func() []server.Route) (*Handlers, error) {
	if rec == nil || reader == nil || db == nil || require == nil || now == nil || routes == nil {
		return nil, errors.New("partner handlers: nil dependency")
	}
	return &Handlers{rec: rec, reader: reader, db: db, require: require, secrets: secrets, now: now, routes: routes}, nil
}

// Register mounts the routes of the four prefixes, each with its health
// check and OpenAPI slice.
func (h *Handlers) Register(r server.Router) {
	rights := r.Group(PrefixRights)
	h.common(rights, PrefixRights, "royalty rail")
	rights.Post("/royalties/verify-webhook", ratelimit.Write, "Partner webhook: record a royalty (HMAC-signed)", h.rightsWebhook)
	rights.Get("/royalties", "The caller's royalties", h.require, h.listRoyalties)

	chess := r.Group(PrefixChess)
	h.common(chess, PrefixChess, "tournament prize rail")
	chess.Post("/tournament-finalized", ratelimit.Write, "Partner webhook: record a tournament's podium (HMAC-signed)", h.tournamentFinalized)
	chess.Post("/tournaments", ratelimit.Write, "Partner webhook: publish or update a tournament (HMAC-signed)", h.publishTournament)
	chess.Get("/results", "The caller's podium entries", h.require, h.listResults)
	chess.Get("/upcoming", "Tournaments accepting entries", h.upcoming)

	cert := r.Group(PrefixCert)
	h.common(cert, PrefixCert, "certification payout rail")
	cert.Post("/payouts/certify-webhook", ratelimit.Write, "Partner webhook: record a certification payout (HMAC-signed)", h.certWebhook)
	cert.Get("/payouts", "The caller's certification payouts", h.require, h.listPayouts)
	cert.Get("/stats", "The caller's certification statistics", h.require, h.certStats)

	eco := r.Group(PrefixEcosystem)
	h.common(eco, PrefixEcosystem, "aggregated partner earnings")
	eco.Get("/earnings", "The caller's earnings across rights, chess and cert", h.require, h.earnings)
}

func (h *Handlers) common(g server.Router, prefix, what string) {
	g.Get("/health", "Liveness and database reachability", platform.Health(h.db, nil))
	g.Get("/openapi.json", "OpenAPI 3.0 slice of the "+what, h.openapi(prefix))
}

// callerEmail is the lower-cased e-mail of the authenticated caller (require
// ran before): the key of the records shown to them.
func callerEmail(c *fiber.Ctx) string {
	p, _ := auth.User(c)
	return strings.ToLower(strings.TrimSpace(p.Email))
}

// receive authenticates a partner delivery against the rail's legacy header
// and secret, then checks the content type and decodes the JSON object into
// dst. Authentication comes first: an unsigned body is not even parsed.
func (h *Handlers) receive(c *fiber.Ctx, legacyHeader, legacySecret string, dst any) error {
	body := bytes.Clone(c.Body())
	d := Delivery{Signature: c.Get(HeaderSignature), Timestamp: c.Get(HeaderTimestamp), Legacy: c.Get(legacyHeader), Body: body}
	if err := h.secrets.Verify(d, legacySecret, h.now()); err != nil {
		return err
	}
	if !bind.IsJSON(c.Get(fiber.HeaderContentType)) {
		return apierr.ContentTypeRequired()
	}
	if !utf8.Valid(body) {
		return apierr.Validation(map[string]string{"body": "must be valid UTF-8"})
	}
	return bind.Decode(body, dst)
}

// text records a missing, over-long or non-text string field.
func text(v *bind.Validator, field, s string, max int) {
	if !v.Required(field, s) {
		return
	}
	if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
		v.Fail(field, "must be valid text without NUL characters")
		return
	}
	v.MaxLen(field, s, max)
}

// email validates a partner-reported e-mail and returns it lower-cased.
func email(v *bind.Validator, field, s string) string {
	s = strings.TrimSpace(s)
	if strings.ContainsRune(s, 0) || !utf8.ValidString(s) {
		v.Fail(field, "must be an e-mail address")
		return ""
	}
	v.Email(field, s)
	return strings.ToLower(s)
}

// Field limits of the partner bodies.
const (
	maxID     = bind.MaxTitle // eventId, tournamentId, productKey, artifactVersionId
	maxPeriod = 64
	maxFormat = 64
	maxPodium = 100
	maxPlace  = 10_000
	maxSeats  = 1_000_000
)
