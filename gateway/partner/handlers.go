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
	"context"
	"errors"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/platform"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
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
	Royalties(ctx context.Context, email string, before schemas.Position, limit int) ([]store.RoyaltyRow, int64, error)
	Prizes(ctx context.Context, email string, before schemas.Position, limit int) ([]store.PrizeRow, int64, error)
	CertPayouts(ctx context.Context, email string, before schemas.Position, limit int) ([]store.CertPayoutRow, int64, error)
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
// check and OpenAPI slice. Each operation is declared with its request and
// answer types (server.Op): binding, validation and the OpenAPI slices come
// from these declarations.
func (h *Handlers) Register(r server.Router) {
	unverified := server.Fails(http.StatusForbidden, "email_unverified: records kept for an address are shown only to its verified owner")
	badSignature := server.Fails(http.StatusUnauthorized, "signature_invalid: bad signature, or timestamp skew")

	rights := r.Group(PrefixRights).KeyArea("partner")
	platform.Basics(rights, "royalty rail", platform.Health(h.db, nil), h.railDoc(PrefixRights, "Royalties (partner rail)"))
	server.Post(rights, "/royalties/verify-webhook", server.Op[royaltyRequest]{
		Summary:     "Partner webhook: record a royalty (HMAC-signed)",
		Description: "A rights partner reports a royalty for a user; it is recorded once (a replay changes nothing). Moves no money.",
		Caller:      "a partner, signing the body with `X-Platform-Signature` and `X-Platform-Timestamp` (no bearer token)",
		Class:       ratelimit.Write, Public: true, Handle: h.rightsWebhook,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "recorded", schemas.RoyaltyReceipt{}),
			server.Answers(http.StatusOK, "replay of the eventId: replayed true, the first record", schemas.RoyaltyReceipt{}),
			badSignature,
		},
	}, h.signed(HeaderRights, h.secrets.rail(h.secrets.RightsHMAC, h.secrets.Rights)))
	server.Get(rights, "/royalties", server.Op[listRequest]{
		Summary:     "The caller's royalties",
		Description: "Pages through the royalties recorded for the caller. Read-only.",
		Handle:      h.listRoyalties,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the caller's royalties, newest first", schemas.CountedPage[schemas.Royalty]{}), unverified,
		},
	}, h.require)

	chess := r.Group(PrefixChess).KeyArea("partner")
	platform.Basics(chess, "tournament prize rail", platform.Health(h.db, nil), h.railDoc(PrefixChess, "Tournament prizes (partner rail)"))
	server.Post(chess, "/tournament-finalized", server.Op[finalizedRequest]{
		Summary:     "Partner webhook: record a tournament's podium (HMAC-signed)",
		Description: "A chess partner reports a tournament's podium; the placed users' prizes are recorded once. Moves no money.",
		Caller:      "a partner, signing the body with `X-Platform-Signature` and `X-Platform-Timestamp` (no bearer token)",
		Class:       ratelimit.Write, Public: true,
		Handle: h.tournamentFinalized,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "at least one new podium entry recorded", schemas.PodiumReceipt{}),
			server.Answers(http.StatusOK, "every entry was recorded before", schemas.PodiumReceipt{}),
			badSignature,
		},
	}, h.signed(HeaderChess, h.secrets.rail(h.secrets.ChessHMAC, h.secrets.Chess)))
	server.Post(chess, "/tournaments", server.Op[tournamentRequest]{
		Summary:     "Partner webhook: publish or update a tournament (HMAC-signed)",
		Description: "A chess partner publishes a tournament or updates it. Creates or replaces the tournament.",
		Caller:      "a partner, signing the body with `X-Platform-Signature` and `X-Platform-Timestamp` (no bearer token)",
		Class:       ratelimit.Write, Public: true,
		Handle: h.publishTournament,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "first publication", schemas.TournamentReceipt{}),
			server.Answers(http.StatusOK, "republication: updated, or replayed true when unchanged", schemas.TournamentReceipt{}),
			badSignature,
		},
	}, h.signed(HeaderChess, h.secrets.rail(h.secrets.ChessHMAC, h.secrets.Chess)))
	server.Get(chess, "/results", server.Op[listRequest]{
		Summary:     "The caller's podium entries",
		Description: "Pages through the caller's podium places and prizes. Read-only.",
		Handle:      h.listResults,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the caller's podium entries, newest first", schemas.CountedPage[schemas.Prize]{}), unverified,
		},
	}, h.require)
	server.Get(chess, "/upcoming", server.Op[upcomingRequest]{
		Summary:     "Tournaments accepting entries",
		Description: "The tournaments that accept entries now. Read-only.",
		Public:      true, Handle: h.upcoming,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "tournaments accepting entries, soonest first", schemas.UpcomingTournaments{}),
			server.Fails(http.StatusBadRequest, "invalid_cursor: the cursor is not one this API issued"),
		},
	})

	cert := r.Group(PrefixCert).KeyArea("partner")
	platform.Basics(cert, "certification payout rail", platform.Health(h.db, nil), h.railDoc(PrefixCert, "Certification payouts (partner rail)"))
	server.Post(cert, "/payouts/certify-webhook", server.Op[certRequest]{
		Summary:     "Partner webhook: record a certification payout (HMAC-signed)",
		Description: "A certification partner reports a payout for a user; it is recorded once (a replay changes nothing). Moves no money.",
		Caller:      "a partner, signing the body with `X-Platform-Signature` and `X-Platform-Timestamp` (no bearer token)",
		Class:       ratelimit.Write, Public: true,
		Handle: h.certWebhook,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "recorded", schemas.CertPayoutReceipt{}),
			server.Answers(http.StatusOK, "replay of the eventId: replayed true, the first record", schemas.CertPayoutReceipt{}),
			badSignature,
		},
	}, h.signed(HeaderCert, h.secrets.rail(h.secrets.CertHMAC, h.secrets.Cert)))
	server.Get(cert, "/payouts", server.Op[listRequest]{
		Summary:     "The caller's certification payouts",
		Description: "Pages through the certification payouts recorded for the caller. Read-only.",
		Handle:      h.listPayouts,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the caller's certification payouts, newest first", schemas.CountedPage[schemas.CertPayout]{}), unverified,
		},
	}, h.require)
	server.Get(cert, "/stats", server.Op[server.NoRequest]{
		Summary:     "The caller's certification statistics",
		Description: "Counts and totals of the caller's certification payouts. Read-only.",
		Handle:      h.certStats,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the caller's certification statistics", schemas.CertStats{}), unverified,
		},
	}, h.require)

	eco := r.Group(PrefixEcosystem).KeyArea("partner")
	platform.Basics(eco, "aggregated partner earnings", platform.Health(h.db, nil), h.railDoc(PrefixEcosystem, "Ecosystem earnings"))
	server.Get(eco, "/earnings", server.Op[server.NoRequest]{
		Summary:     "The caller's earnings across rights, chess and cert",
		Description: "The caller's earnings summed over the three partner rails. Read-only.",
		Handle:      h.earnings,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the caller's earnings", schemas.Earnings{}), unverified,
		},
	}, h.require)
}

// callerEmail is the lower-cased e-mail of the authenticated caller (require
// ran before): the key of the records shown to them.
func callerEmail(c *fiber.Ctx) string {
	p, _ := auth.User(c)
	return strings.ToLower(strings.TrimSpace(p.Email))
}

// signed authenticates a partner delivery against the rail's secrets
// (Secrets.Verify), then checks the content type and the text of the body; the
// typed route then decodes it. Authentication comes first: an unsigned body
// is not even parsed.
func (h *Handlers) signed(legacyHeader string, rail Rail) fiber.Handler {
	return func(c *fiber.Ctx) error {
		d := Delivery{Signature: c.Get(HeaderSignature), Timestamp: c.Get(HeaderTimestamp), Legacy: c.Get(legacyHeader),
			Method: c.Method(), Path: c.Path(), Body: c.Body()}
		if err := h.secrets.Verify(d, rail, h.now()); err != nil {
			return err
		}
		if !bind.IsJSON(c.Get(fiber.HeaderContentType)) {
			return apierr.ContentTypeRequired()
		}
		if !utf8.Valid(c.Body()) {
			return apierr.Validation(map[string]string{"body": "must be valid UTF-8"})
		}
		return c.Next()
	}
}

// signature documents the headers that authenticate a delivery (read by
// signed); legacy names the rail's secret header.
type signature struct {
	Signature string `header:"X-Platform-Signature" json:"-" description:"v2=<hex HMAC-SHA256 of timestamp.METHOD.path.body> (required with the rail's own secret), or hex HMAC-SHA256 of timestamp.body with an optional sha256= prefix (shared secret only)"`
	Timestamp string `header:"X-Platform-Timestamp" json:"-" description:"unix seconds, within 300 s of the server clock"`
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

// railDescription is said by every rail's document.
const railDescription = "Partner webhooks are authenticated with X-Platform-Signature (hex HMAC-SHA256 over " +
	"timestamp + \".\" + the raw body, optional sha256= prefix) and X-Platform-Timestamp (unix seconds, 300 s " +
	"tolerance), or the legacy per-receiver secret header unless WEBHOOK_REQUIRE_HMAC=1. Amounts are integer " +
	"KZT minor units; nothing moves money."

// railDoc serves the document of the routes under one rail's prefix.
func (h *Handlers) railDoc(prefix, title string) fiber.Handler {
	return openapi.Handler(h.routes, openapi.Doc{Title: title, Description: railDescription, Prefixes: []string{prefix}})
}
