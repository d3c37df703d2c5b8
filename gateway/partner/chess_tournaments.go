package partner

import (
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/partner"
	"github.com/fintech/platform/storage/pipeline"
)

// tournamentRequest is a tournament published by the chess partner.
type tournamentRequest struct {
	signature
	Legacy    string      `header:"X-Chess-Secret" json:"-" description:"legacy shared secret (disabled by WEBHOOK_REQUIRE_HMAC=1)"`
	ID        string      `json:"id" required:"true" maxLength:"200"`
	StartsAt  string      `json:"startsAt" required:"true" format:"date-time" description:"RFC 3339, kept with the precision sent (to the microsecond)"`
	Format    string      `json:"format" required:"true" maxLength:"64"`
	PrizePool bind.Amount `json:"prizePool" required:"true"`
	Capacity  seats       `json:"capacity" required:"true"`
	Entries   entries     `json:"entries" required:"true"`
	Version   *int64      `json:"version" minimum:"1" description:"the partner's version of this tournament (or an increasing event number): an update with an older version than the stored one changes nothing and answers stale: true; omitted, the last delivery wins until a versioned one is stored"`
}

// publishTournament publishes a tournament for /chess/upcoming (decisions.md:
// the partner publishes them with the same signature). The first
// publication of an id answers 201; a republication answers 200, and
// updates the fields it changes (entries grow as players register) or, when
// nothing changed, is a replay with replayed: true. An older version than
// the stored one changes nothing: 200 with the stored tournament and
// stale: true.
func (h *Handlers) publishTournament(c *fiber.Ctx, req *tournamentRequest) error {
	var v bind.Validator
	text(&v, "id", req.ID, maxID)
	var starts time.Time
	if v.Required("startsAt", req.StartsAt) {
		t, err := time.Parse(time.RFC3339, req.StartsAt)
		if err != nil {
			v.Fail("startsAt", "must be an RFC 3339 timestamp such as 2025-06-01T12:00:00Z")
		}
		// Kept as precise as it was sent (Postgres keeps microseconds): a
		// partner that sends milliseconds reads them back.
		starts = t.UTC().Truncate(time.Microsecond)
	}
	text(&v, "format", req.Format, maxFormat)
	pool := v.Amount("prizePool", req.PrizePool)
	capacity := req.Capacity.within(func(r string) { v.Fail("capacity", r) }, 1, maxSeats)
	nEntries := req.Entries.within(func(r string) { v.Fail("entries", r) }, 0, maxSeats)
	if req.Capacity.Set && req.Entries.Set && nEntries > capacity {
		v.Fail("entries", "must not exceed capacity")
	}
	var version int64
	if req.Version != nil {
		version = *req.Version
		v.Check(version >= 1, "version", "must be a positive integer")
	}
	if err := v.Err(); err != nil {
		return err
	}
	now := h.now().UTC().Truncate(time.Second) // timestamps are shown as RFC 3339 seconds
	row := store.TournamentRow{ID: req.ID, StartsAt: starts, Format: req.Format, PrizePool: pool,
		Capacity: int(capacity), Entries: int(nEntries), Version: version}
	got, outcome, err := h.rec.PublishTournament(c.UserContext(), row, now, func(t store.TournamentRow) (pipeline.OutboxRow, error) {
		return event(schemas.TypeTournamentPublished, t.ID, t.View(), now)
	})
	if err != nil {
		return err
	}
	status := http.StatusOK
	if outcome == store.Created {
		status = http.StatusCreated
	}
	return c.Status(status).JSON(schemas.TournamentReceipt{Tournament: got.View(), Replayed: outcome == store.Unchanged,
		Stale: outcome == store.Stale})
}
