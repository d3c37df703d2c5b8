package partner

import (
	"fmt"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/partner"
	"github.com/fintech/platform/storage/pipeline"
)

// podiumItem is one place of a finalized tournament.
type podiumItem struct {
	Email  string      `json:"email" required:"true" format:"email"`
	Place  place       `json:"place" required:"true"`
	Amount bind.Amount `json:"amount" required:"true"`
}

// finalizedRequest is a tournament's podium reported by the chess partner.
type finalizedRequest struct {
	signature
	Legacy       string       `header:"X-Chess-Secret" json:"-" description:"legacy shared secret (disabled by WEBHOOK_REQUIRE_HMAC=1)"`
	TournamentID string       `json:"tournamentId" required:"true" maxLength:"200"`
	Podium       []podiumItem `json:"podium" required:"true" nullable:"false" minItems:"1" maxItems:"100" description:"each (place, email) at most once"`
}

// tournamentFinalized records a tournament's podium, once per (tournament,
// place, e-mail). A delivery that records at least one new entry answers
// 201, one whose entries were all recorded before answers 200; both list
// the new entries in recorded and the repeated ones in replayed.
func (h *Handlers) tournamentFinalized(c *fiber.Ctx, req *finalizedRequest) error {
	var v bind.Validator
	text(&v, "tournamentId", req.TournamentID, maxID)
	if len(req.Podium) == 0 || len(req.Podium) > maxPodium {
		v.Fail("podium", fmt.Sprintf("must list 1 to %d entries", maxPodium))
	}
	now := h.now().UTC().Truncate(time.Second) // timestamps are shown as RFC 3339 seconds
	entries := make([]store.PrizeRow, 0, min(len(req.Podium), maxPodium))
	seen := map[string]bool{}
	for i, it := range req.Podium {
		if i >= maxPodium {
			break
		}
		f := fmt.Sprintf("podium[%d].", i)
		mail := email(&v, f+"email", it.Email)
		place := it.Place.within(func(reason string) { v.Fail(f+"place", reason) }, 1, maxPlace)
		amount := v.Amount(f+"amount", it.Amount)
		key := fmt.Sprint(place, "\x00", mail)
		if seen[key] {
			v.Fail(fmt.Sprintf("podium[%d]", i), "repeats the place and e-mail of an earlier entry")
		}
		seen[key] = true
		entries = append(entries, store.PrizeRow{ID: schemas.NewID(), TournamentID: req.TournamentID, Place: int(place),
			Email: mail, Amount: amount, FinalizedAt: now})
	}
	if err := v.Err(); err != nil {
		return err
	}
	recorded, replayed, err := h.rec.RecordPodium(c.UserContext(), entries, func(p store.PrizeRow, userID string) (pipeline.OutboxRow, error) {
		return event(schemas.TypePrizeRecorded, p.Email, schemas.PrizeRecorded{Prize: p.View(), Email: p.Email, UserID: userID}, now)
	})
	if err != nil {
		return err
	}
	out := schemas.PodiumReceipt{TournamentID: req.TournamentID, Recorded: entriesOf(recorded), Replayed: entriesOf(replayed), FinalizedAt: now}
	for _, e := range append(out.Recorded, out.Replayed...) {
		if e.FinalizedAt.Before(out.FinalizedAt) {
			out.FinalizedAt = e.FinalizedAt
		}
	}
	status := http.StatusCreated
	if len(recorded) == 0 {
		status = http.StatusOK
	}
	return c.Status(status).JSON(out)
}

func entriesOf(rows []store.PrizeRow) []schemas.PodiumEntry {
	out := make([]schemas.PodiumEntry, 0, len(rows))
	for _, r := range rows {
		out = append(out, schemas.PodiumEntry{Prize: r.View(), Email: r.Email})
	}
	return out
}
