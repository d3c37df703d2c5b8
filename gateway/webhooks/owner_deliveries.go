package webhooks

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/webhooks"
)

// ownerDeliveriesRequest is the query of GET /webhook-subs/:id/deliveries
// (ID empty: GET /me/webhook/deliveries).
type ownerDeliveriesRequest struct {
	bind.TimePaging
	Status string `query:"status" json:"-" enum:"pending,failed,delivered,dead_letter" description:"only deliveries in this status"`
}

// Validate reads the page; the status is bound by its enum tag.
func (req *ownerDeliveriesRequest) Validate() error { return req.TimePaging.Validate() }

type endpointDeliveriesRequest struct {
	ID string `path:"id" json:"-" format:"ksuid"`
	ownerDeliveriesRequest
}

// endpointDeliveries serves GET /webhook-subs/:id/deliveries.
func (h *Handlers) endpointDeliveries(c *fiber.Ctx, req *endpointDeliveriesRequest) error {
	return h.ownerDeliveries(c, req.ID, &req.ownerDeliveriesRequest)
}

// primaryDeliveries serves GET /me/webhook/deliveries.
func (h *Handlers) primaryDeliveries(c *fiber.Ctx, req *ownerDeliveriesRequest) error {
	return h.ownerDeliveries(c, "", req)
}

// ownerDeliveries lists the deliveries of one of the caller's endpoints,
// newest first, with the admin log's fields.
func (h *Handlers) ownerDeliveries(c *fiber.Ctx, id string, req *ownerDeliveriesRequest) error {
	p, _ := auth.User(c)
	sub, err := h.store.Subscription(c.UserContext(), p.UserID, id)
	if err != nil {
		return owned(err)
	}
	page := req.Page()
	rows, err := h.store.List(c.UserContext(), store.Filter{WebhookID: sub.ID, Status: req.Status,
		Before: req.Position(), Limit: page.Limit + 1})
	if err != nil {
		return err
	}
	return c.JSON(bind.PageOf(rows, page.Limit, deliveryPosition, ownerDeliveryJSON))
}

// ownerDeliveryJSON is a delivery as its endpoint's owner sees it: the last
// error as a reason class (schemas.WebhookOwnerReason) and the attempt's
// duration only when the endpoint answered, so that the log is no port or
// liveness probe of the hosts an owner points an endpoint at.
func ownerDeliveryJSON(d store.Delivery) schemas.WebhookDelivery {
	out := deliveryToJSON(d)
	if out.LastError != nil {
		r := schemas.WebhookOwnerReason(*out.LastError)
		out.LastError = &r
	}
	if d.LastStatusCode == nil {
		out.LastDurationMs = nil
	}
	return out
}

func deliveryPosition(d store.Delivery) string {
	return schemas.Position{At: d.CreatedAt, ID: d.ID}.String()
}

type endpointRetryRequest struct {
	ID         string `path:"id" json:"-" format:"ksuid"`
	DeliveryID string `path:"deliveryId" json:"-" format:"ksuid"`
}

type primaryRetryRequest struct {
	DeliveryID string `path:"deliveryId" json:"-" format:"ksuid"`
}

// endpointRetry serves POST /webhook-subs/:id/deliveries/:deliveryId/retry.
func (h *Handlers) endpointRetry(c *fiber.Ctx, req *endpointRetryRequest) error {
	return h.ownerRetry(c, req.ID, req.DeliveryID)
}

// primaryRetry serves POST /me/webhook/deliveries/:deliveryId/retry.
func (h *Handlers) primaryRetry(c *fiber.Ctx, req *primaryRetryRequest) error {
	return h.ownerRetry(c, "", req.DeliveryID)
}

// ownerRetry queues a failed or dead-lettered delivery of the caller's
// endpoint for an attempt now (202); a pending or delivered one is 409
// invalid_state; another user's endpoint or delivery is 404.
func (h *Handlers) ownerRetry(c *fiber.Ctx, id, deliveryID string) error {
	p, _ := auth.User(c)
	sub, err := h.store.Subscription(c.UserContext(), p.UserID, id)
	if err != nil {
		return owned(err)
	}
	d, err := h.store.RetryOwned(c.UserContext(), sub.ID, deliveryID, h.now().UTC())
	switch {
	case errors.Is(err, store.ErrNotRetryable):
		return apierr.New(http.StatusConflict, schemas.CodeInvalidState,
			"only a failed or dead-lettered delivery can be retried; this one is pending or delivered")
	case err != nil:
		return owned(err)
	}
	h.waker.Wake()
	return c.Status(http.StatusAccepted).JSON(ownerDeliveryJSON(d))
}

// endpointTest serves POST /webhook-subs/:id/test.
func (h *Handlers) endpointTest(c *fiber.Ctx, req *endpointPath) error {
	return h.sendTest(c, req.ID)
}

// primaryTest serves POST /me/webhook/test.
func (h *Handlers) primaryTest(c *fiber.Ctx, _ *meRequest) error {
	return h.sendTest(c, "")
}

// sendTest queues a webhook.test event for one of the caller's endpoints
// (whatever its events list) through the delivery rows the scheduler works
// on, so it is signed, retried and logged like any delivery (202 with the
// delivery).
func (h *Handlers) sendTest(c *fiber.Ctx, id string) error {
	p, _ := auth.User(c)
	sub, err := h.store.Subscription(c.UserContext(), p.UserID, id)
	if err != nil {
		return owned(err)
	}
	// A map, so the keys come sorted like every delivery's data.
	data, err := json.Marshal(map[string]string{"webhookId": sub.ID, "userId": p.UserID,
		"message": "a test delivery sent by the endpoint's owner"})
	if err != nil {
		return err
	}
	now := h.now().UTC()
	d, err := h.store.QueueEvent(c.UserContext(), sub.ID, store.Event{ID: schemas.NewID(), Type: schemas.TypeWebhookTest,
		Module: ModuleWebhooks, Data: data, OccurredAt: now}, now)
	if err != nil {
		return owned(err)
	}
	h.waker.Wake()
	return c.Status(http.StatusAccepted).JSON(ownerDeliveryJSON(d))
}

// ModuleWebhooks is the module of the events the webhooks module makes
// itself (webhook.test).
const ModuleWebhooks = "webhooks"
