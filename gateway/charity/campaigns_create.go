package charity

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/charity"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/topics"
)

// Limits of a campaign proposal (decisions.md, Conventions and Charity).
const (
	maxMedia    = 10
	maxMediaURL = 2048
)

// createCampaignRequest proposes a campaign.
type createCampaignRequest struct {
	Title       string      `json:"title" required:"true" minLength:"1" maxLength:"200"`
	Description string      `json:"description" required:"true" minLength:"1" maxLength:"20000"`
	Category    string      `json:"category" required:"true" minLength:"1" maxLength:"64"`
	GoalKzt     bind.Amount `json:"goalKzt" required:"true"`
	Media       []string    `json:"media" maxItems:"10" description:"https URLs of at most 2048 characters"`
	EndsAt      *string     `json:"endsAt" format:"date-time" description:"in the future; open-ended when left out"`
}

// validate checks the proposal and returns the campaign (without ids).
func (req createCampaignRequest) validate(now time.Time) (store.Campaign, error) {
	var v bind.Validator
	c := store.Campaign{
		Title:       strings.TrimSpace(req.Title),
		Description: strings.TrimSpace(req.Description),
		Category:    strings.TrimSpace(req.Category),
		Media:       []string{},
	}
	// title, description and category are required and bounded by their tags.
	c.GoalKzt = v.Amount("goalKzt", req.GoalKzt)
	if len(req.Media) > maxMedia {
		v.Fail("media", "must hold at most "+strconv.Itoa(maxMedia)+" URLs")
	}
	for i, m := range req.Media {
		field := "media[" + strconv.Itoa(i) + "]"
		m = strings.TrimSpace(m)
		if !httpsURL(m) {
			v.Fail(field, "must be an https URL of at most "+strconv.Itoa(maxMediaURL)+" characters")
			continue
		}
		c.Media = append(c.Media, m)
	}
	if req.EndsAt != nil {
		t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(*req.EndsAt))
		switch {
		case err != nil:
			v.Fail("endsAt", "must be an RFC 3339 timestamp such as 2030-01-02T15:04:05Z")
		case !t.After(now):
			v.Fail("endsAt", "must be in the future")
		default:
			t = t.UTC().Truncate(time.Microsecond)
			c.EndsAt = &t
		}
	}
	return c, v.Err()
}

func httpsURL(s string) bool {
	if len(s) > maxMediaURL || strings.ContainsAny(s, "\x00 \t\r\n") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "https" && u.Host != "" && u.User == nil
}

// createCampaign proposes a campaign: it is stored pending, with its own
// platform-held KZT wallet, and campaign.created is queued in the same
// transaction. 201 with the campaign.
func (h *Handlers) createCampaign(c *fiber.Ctx, req *createCampaignRequest) error {
	now := h.now().UTC().Truncate(time.Microsecond)
	camp, err := req.validate(now)
	if err != nil {
		return err
	}
	camp.ID = schemas.NewID()
	camp.WalletID = schemas.CampaignWalletID(camp.ID)
	camp.ProposerUserID = caller(c)
	camp.Status = schemas.CampaignPending
	camp.CreatedAt = now
	ev, err := outboxRow(topics.EventsCharity, schemas.TypeCampaignCreated, camp.ID, camp.ProposerUserID,
		campaignEvent(camp, now), now)
	if err != nil {
		return err
	}
	// The campaign's wallet is a wallet like any other for the analytics
	// copy: it is announced like one (owner as stored, "campaign:<id>").
	wev, err := outboxRow(topics.EventsFiat, schemas.TypeWalletCreated, camp.WalletID, camp.ProposerUserID,
		schemas.WalletCreated{WalletID: camp.WalletID, UserID: "campaign:" + camp.ID, Currency: "KZT",
			Kind: "campaign", CreatedAt: now}, now)
	if err != nil {
		return err
	}
	if err := h.writer.Create(c.UserContext(), camp, []pipeline.OutboxRow{ev, wev}); err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(viewOf(camp, now))
}

func campaignEvent(c store.Campaign, at time.Time) schemas.CampaignEvent {
	return schemas.CampaignEvent{CampaignID: c.ID, ProposerUserID: c.ProposerUserID, Title: c.Title,
		Category: c.Category, GoalKzt: c.GoalKzt, Status: c.Status, Pinned: c.Pinned, Featured: c.Featured, At: at}
}
