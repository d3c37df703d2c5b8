package webhooks

import (
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
	store "github.com/fintech/platform/storage/webhooks"
)

func deliveryToJSON(d store.Delivery) schemas.WebhookDelivery {
	out := schemas.WebhookDelivery{ID: d.ID, WebhookID: d.WebhookID, EventID: d.EventID, Type: d.Type, Status: d.Status,
		Attempts: d.Attempts, LastStatusCode: d.LastStatusCode, LastDurationMs: d.LastDurationMs, CreatedAt: d.CreatedAt.UTC()}
	if d.LastError != "" {
		e := d.LastError
		out.LastError = &e
	}
	// Terminal rows have no next attempt; an in-flight row shows its lease.
	if d.NextAttemptAt != nil && (d.Status == store.StatusPending || d.Status == store.StatusFailed) {
		t := d.NextAttemptAt.UTC()
		out.NextAttemptAt = &t
	}
	return out
}

// listDeliveriesRequest is the query of GET /admin/webhook-deliveries.
type listDeliveriesRequest struct {
	bind.TimePaging
	WebhookID string `query:"webhookId" json:"-" description:"only deliveries of this subscription"`
	Status    string `query:"status" json:"-" enum:"pending,failed,delivered,dead_letter" description:"only deliveries in this status"`
}

// Validate reads the page and checks the status.
func (req *listDeliveriesRequest) Validate() error {
	if err := req.TimePaging.Validate(); err != nil {
		return err
	}
	if req.Status != "" {
		var v bind.Validator
		v.OneOf("status", req.Status, store.StatusPending, store.StatusFailed, store.StatusDelivered, store.StatusDeadLetter)
		return v.Err()
	}
	return nil
}

// listDeliveries serves GET /admin/webhook-deliveries: newest first,
// filtered by `webhookId` and `status`, paginated with `cursor`/`limit`.
func (h *Handlers) listDeliveries(c *fiber.Ctx, req *listDeliveriesRequest) error {
	page := req.Page()
	rows, err := h.store.List(c.UserContext(), store.Filter{WebhookID: req.WebhookID, Status: req.Status,
		Before: req.Position(), Limit: page.Limit + 1})
	if err != nil {
		return err
	}
	return c.JSON(bind.PageOf(rows, page.Limit, deliveryPosition, deliveryToJSON))
}

// deliveryPath is the request of an operation on one delivery.
type deliveryPath struct {
	ID string `path:"id" json:"-" format:"ksuid"`
}

// retryDelivery serves POST /admin/webhook-deliveries/:id/retry: the
// delivery is queued for an attempt now (202); the attempt itself runs on
// the scheduler's pool.
func (h *Handlers) retryDelivery(c *fiber.Ctx, req *deliveryPath) error {
	d, err := h.store.Retry(c.UserContext(), req.ID, h.now().UTC())
	if errors.Is(err, postgres.ErrNotFound) {
		return apierr.NotFound("no such webhook delivery")
	}
	if err != nil {
		return err
	}
	h.waker.Wake()
	return c.Status(http.StatusAccepted).JSON(deliveryToJSON(d))
}
