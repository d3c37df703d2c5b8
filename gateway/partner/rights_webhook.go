package partner

import (
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/partner"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/topics"
)

// royaltyRequest is a royalty reported by the rights partner.
type royaltyRequest struct {
	signature
	Legacy     string      `header:"X-Rights-Secret" json:"-" description:"legacy shared secret (disabled by WEBHOOK_REQUIRE_HMAC=1)"`
	EventID    string      `json:"eventId" required:"true" maxLength:"200" description:"the partner's id of the delivery; a replay answers the first record"`
	Email      string      `json:"email" required:"true" format:"email"`
	ProductKey string      `json:"productKey" required:"true" maxLength:"200"`
	Period     string      `json:"period" required:"true" maxLength:"64"`
	Amount     bind.Amount `json:"amount" required:"true"`
}

// rightsWebhook records a royalty reported by the rights partner, once per
// eventId: first delivery 201, any replay 200 with replayed: true and the
// royalty first recorded.
func (h *Handlers) rightsWebhook(c *fiber.Ctx, req *royaltyRequest) error {
	var v bind.Validator
	text(&v, "eventId", req.EventID, maxID)
	mail := email(&v, "email", req.Email)
	text(&v, "productKey", req.ProductKey, maxID)
	text(&v, "period", req.Period, maxPeriod)
	amount := v.Amount("amount", req.Amount)
	if err := v.Err(); err != nil {
		return err
	}
	now := h.now().UTC().Truncate(time.Second) // timestamps are shown as RFC 3339 seconds
	row := store.RoyaltyRow{ID: schemas.NewID(), EventID: req.EventID, Email: mail, ProductKey: req.ProductKey,
		Period: req.Period, Amount: amount, PaidAt: now}
	got, inserted, err := h.rec.RecordRoyalty(c.UserContext(), row, func(r store.RoyaltyRow, userID string) (pipeline.OutboxRow, error) {
		return event(schemas.TypeRoyaltyRecorded, r.Email, schemas.RoyaltyRecorded{Royalty: r.View(), Email: r.Email, UserID: userID}, now)
	})
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if !inserted {
		status = http.StatusOK
	}
	return c.Status(status).JSON(schemas.RoyaltyReceipt{Replayed: !inserted, Royalty: got.View()})
}

// event encodes one events.partner event keyed by key.
func event(typ, key string, data any, now time.Time) (pipeline.OutboxRow, error) {
	env, err := schemas.New(typ, key, "", data, now)
	if err != nil {
		return pipeline.OutboxRow{}, err
	}
	return pipeline.EventRow(topics.EventsPartner, env)
}
