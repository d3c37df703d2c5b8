package webhooks

import (
	"errors"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/storage/postgres"
	store "github.com/fintech/platform/storage/webhooks"
)

type deliveryJSON struct {
	ID             string     `json:"id"`
	WebhookID      string     `json:"webhookId"`
	EventID        string     `json:"eventId"`
	Type           string     `json:"type"`
	Status         string     `json:"status"`
	Attempts       int        `json:"attempts"`
	LastStatusCode *int       `json:"lastStatusCode"`
	LastError      *string    `json:"lastError"`
	NextAttemptAt  *time.Time `json:"nextAttemptAt"`
	CreatedAt      time.Time  `json:"createdAt"`
}

func deliveryToJSON(d store.Delivery) deliveryJSON {
	out := deliveryJSON{ID: d.ID, WebhookID: d.WebhookID, EventID: d.EventID, Type: d.Type, Status: d.Status,
		Attempts: d.Attempts, LastStatusCode: d.LastStatusCode, CreatedAt: d.CreatedAt.UTC()}
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

type deliveryPage struct {
	Items      []deliveryJSON `json:"items"`
	NextCursor *string        `json:"nextCursor"`
}

// listDeliveries serves GET /admin/webhook-deliveries: newest first,
// filtered by `webhookId` and `status`, paginated with `cursor`/`limit`.
func (h *Handlers) listDeliveries(c *fiber.Ctx) error {
	page, err := bind.PageQuery(c)
	if err != nil {
		return err
	}
	f := store.Filter{WebhookID: c.Query("webhookId"), Status: c.Query("status"), Before: page.After, Limit: page.Limit + 1}
	if f.Status != "" {
		var v bind.Validator
		v.OneOf("status", f.Status, store.StatusPending, store.StatusFailed, store.StatusDelivered, store.StatusDeadLetter)
		if err := v.Err(); err != nil {
			return err
		}
	}
	rows, err := h.cfg.Store.List(c.UserContext(), f)
	if err != nil {
		return err
	}
	out := deliveryPage{Items: make([]deliveryJSON, 0, len(rows))}
	if len(rows) > page.Limit {
		rows = rows[:page.Limit]
		next := bind.Cursor(rows[len(rows)-1].ID)
		out.NextCursor = &next
	}
	for _, d := range rows {
		out.Items = append(out.Items, deliveryToJSON(d))
	}
	return c.JSON(out)
}

// retryDelivery serves POST /admin/webhook-deliveries/:id/retry: the
// delivery is queued for an attempt now (202); the attempt itself runs on
// the scheduler's pool.
func (h *Handlers) retryDelivery(c *fiber.Ctx) error {
	id := string([]byte(c.Params("id")))
	d, err := h.cfg.Store.Retry(c.UserContext(), id, h.cfg.Now().UTC())
	if errors.Is(err, postgres.ErrNotFound) {
		return apierr.NotFound("no such webhook delivery")
	}
	if err != nil {
		return err
	}
	h.cfg.Waker.Wake()
	return c.Status(http.StatusAccepted).JSON(deliveryToJSON(d))
}
