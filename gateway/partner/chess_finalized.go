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

type podiumItem struct {
	Email  string      `json:"email"`
	Place  count       `json:"place"`
	Amount bind.Amount `json:"amount"`
}

type finalizedRequest struct {
	TournamentID string       `json:"tournamentId"`
	Podium       []podiumItem `json:"podium"`
}

// podiumEntry is one recorded podium entry as the partner is answered: the
// prize and the e-mail it belongs to.
type podiumEntry struct {
	schemas.Prize
	Email string `json:"email"`
}

type finalizedResponse struct {
	TournamentID string        `json:"tournamentId"`
	Recorded     []podiumEntry `json:"recorded"`
	Replayed     []podiumEntry `json:"replayed"`
	// FinalizedAt is when the first of these entries was recorded.
	FinalizedAt time.Time `json:"finalizedAt"`
}

// tournamentFinalized records a tournament's podium, once per (tournament,
// place, e-mail). A delivery that records at least one new entry answers
// 201, one whose entries were all recorded before answers 200; both list
// the new entries in recorded and the repeated ones in replayed.
func (h *Handlers) tournamentFinalized(c *fiber.Ctx) error {
	var req finalizedRequest
	if err := h.receive(c, HeaderChess, h.secrets.Chess, &req); err != nil {
		return err
	}
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
	out := finalizedResponse{TournamentID: req.TournamentID, Recorded: entriesOf(recorded), Replayed: entriesOf(replayed), FinalizedAt: now}
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

func entriesOf(rows []store.PrizeRow) []podiumEntry {
	out := make([]podiumEntry, 0, len(rows))
	for _, r := range rows {
		out = append(out, podiumEntry{Prize: r.View(), Email: r.Email})
	}
	return out
}
