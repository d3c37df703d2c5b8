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

// certRequest is a certification payout reported by the cert partner.
type certRequest struct {
	signature
	Legacy            string      `header:"X-Cert-Secret" json:"-" description:"legacy shared secret (disabled by WEBHOOK_REQUIRE_HMAC=1)"`
	EventID           string      `json:"eventId" required:"true" maxLength:"200" description:"the partner's id of the delivery; a replay answers the first record"`
	Email             string      `json:"email" required:"true" format:"email"`
	ArtifactVersionID string      `json:"artifactVersionId" required:"true" maxLength:"200"`
	Amount            bind.Amount `json:"amount" required:"true"`
}

// certWebhook records a certification payout reported by the cert partner,
// once per eventId: first delivery 201, any replay 200 with replayed: true.
func (h *Handlers) certWebhook(c *fiber.Ctx, req *certRequest) error {
	var v bind.Validator
	text(&v, "eventId", req.EventID, maxID)
	mail := email(&v, "email", req.Email)
	text(&v, "artifactVersionId", req.ArtifactVersionID, maxID)
	amount := v.Amount("amount", req.Amount)
	if err := v.Err(); err != nil {
		return err
	}
	now := h.now().UTC().Truncate(time.Second) // timestamps are shown as RFC 3339 seconds
	row := store.CertPayoutRow{ID: schemas.NewID(), EventID: req.EventID, Email: mail,
		ArtifactVersionID: req.ArtifactVersionID, Amount: amount, CertifiedAt: now}
	got, inserted, err := h.rec.RecordCertPayout(c.UserContext(), row, func(p store.CertPayoutRow, userID string) (pipeline.OutboxRow, error) {
		return event(schemas.TypeCertPayoutRecorded, p.Email, schemas.CertPayoutRecorded{CertPayout: p.View(), Email: p.Email, UserID: userID}, now)
	})
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if !inserted {
		status = http.StatusOK
	}
	return c.Status(status).JSON(schemas.CertPayoutReceipt{Replayed: !inserted, CertPayout: got.View()})
}
