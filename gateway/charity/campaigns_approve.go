package charity

import (
	"errors"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/charity"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/topics"
)

// weightCharityOrganizer is the reputation the proposer gets on approval.
const weightCharityOrganizer = 2

// approveRequest approves one campaign; its body may be left out.
type approveRequest struct {
	ID      string `path:"id" json:"-" format:"ksuid"`
	Pin     bool   `json:"pin" description:"show the campaign first in the list"`
	Feature bool   `json:"feature" description:"mark the campaign as featured"`
}

// BodyIsOptional: an approval without a body neither pins nor features.
func (approveRequest) BodyIsOptional() {}

// approveCampaign moves a pending campaign to active (charity admins only),
// optionally pinned or featured, and queues campaign.approved and the
// proposer's charity-organizer +2 in the same transaction. The body is
// optional. 200 with the campaign; 409 invalid_state when it is not pending.
func (h *Handlers) approveCampaign(c *fiber.Ctx, req *approveRequest) error {
	id := req.ID
	if !validID(id) {
		return errCampaignNotFound
	}
	now := h.now().UTC().Truncate(time.Microsecond)
	admin := caller(c)
	camp, err := h.writer.Approve(c.UserContext(), id, req.Pin, req.Feature, now,
		func(camp store.Campaign) ([]pipeline.OutboxRow, error) {
			ev, err := outboxRow(topics.EventsCharity, schemas.TypeCampaignApproved, camp.ID, admin,
				campaignEvent(camp, now), now)
			if err != nil {
				return nil, err
			}
			rep, err := outboxRow(topics.ReputationCommands, schemas.TypeReputationEvent, camp.ProposerUserID,
				camp.ProposerUserID, schemas.ReputationEvent{UserID: camp.ProposerUserID,
					Kind: schemas.RepKindCharityOrganizer, SourceModule: "charity", Weight: weightCharityOrganizer,
					SourceID: "campaign-approved:" + camp.ID}, now)
			if err != nil {
				return nil, err
			}
			return []pipeline.OutboxRow{ev, rep}, nil
		})
	switch {
	case isNotFound(err):
		return errCampaignNotFound
	case errors.Is(err, store.ErrInvalidState):
		return apierr.New(http.StatusConflict, schemas.CodeInvalidState, "only a pending campaign can be approved")
	case err != nil:
		return err
	}
	if camp.DonorCount, err = h.reader.DonorCount(c.UserContext(), camp.ID); err != nil {
		return err
	}
	return c.JSON(viewOf(camp, now))
}
