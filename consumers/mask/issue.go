package mask

import (
	"net/http"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/mask"
	"github.com/fintech/platform/topics"
)

// issue creates a mask with a new virtual PAN. It locks nothing: the mask
// is new.
type issue struct{ schemas.MaskIssue }

func (*issue) Lock(*batch) {}

func (c *issue) Decide(b *batch, env schemas.Envelope) (pipeline.Outcome, error) {
	if _, exists := b.masks[c.MaskID]; exists {
		return pipeline.Reject(http.StatusConflict, schemas.CodeMaskExists, "a mask with this id exists", nil), nil
	}
	pan, err := b.h.pan()
	if err != nil {
		return pipeline.Outcome{}, err
	}
	row := store.MaskRow{
		ID: c.MaskID, UserID: c.UserID, Label: c.Label, Kind: c.Kind,
		LockedToMerchant: c.LockedToMerchant, LockedToCategory: c.LockedToCategory,
		Currency: c.Currency, SpendLimitCents: c.SpendLimitCents, RemainingCents: c.SpendLimitCents,
		VirtualPan: pan, Status: schemas.MaskStatusActive, ExpiresAt: c.ExpiresAt.UTC(), CreatedAt: b.now,
	}
	b.masks[c.MaskID] = &maskState{row: row, isNew: true, seen: map[string]bool{}, refs: map[string]store.ChargeRow{}}
	view := row.View(b.now)
	ev, err := b.event(env, schemas.TypeMaskCreated, c.MaskID, c.UserID, view)
	if err != nil {
		return pipeline.Outcome{}, err
	}
	out := pipeline.JSON(http.StatusCreated, view)
	out.Emit = []pipeline.Emission{{Topic: topics.EventsMask, Env: ev}}
	return out, nil
}
