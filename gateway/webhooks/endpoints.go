package webhooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/swaggest/jsonschema-go"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
	store "github.com/fintech/platform/storage/webhooks"
)

// detail is an endpoint as its owner manages it.
func detail(s store.Subscription) schemas.WebhookSubscriptionDetail {
	return schemas.WebhookSubscriptionDetail{WebhookSubscription: toJSON(s), Primary: s.Primary, Enabled: s.Enabled,
		UpdatedAt: s.UpdatedAt.UTC()}
}

// notFound is the one answer for a subscription that is not the caller's,
// whether it exists or not.
func notFound() error {
	return apierr.NotFound("no such webhook subscription of the caller")
}

// owned maps a store miss to 404.
func owned(err error) error {
	if errors.Is(err, postgres.ErrNotFound) {
		return notFound()
	}
	return err
}

// listEndpointsRequest is the query of GET /me/webhooks.
type listEndpointsRequest struct {
	bind.TimePaging
}

// listEndpoints serves GET /me/webhooks: the caller's endpoints, the
// primary one included, newest first; secrets are never shown.
func (h *Handlers) listEndpoints(c *fiber.Ctx, req *listEndpointsRequest) error {
	p, _ := auth.User(c)
	page := req.Page()
	rows, err := h.store.ListSubscriptions(c.UserContext(), p.UserID, req.Position(), page.Limit+1)
	if err != nil {
		return err
	}
	return c.JSON(bind.PageOf(rows, page.Limit, func(s store.Subscription) string {
		return schemas.Position{At: s.CreatedAt, ID: s.ID}.String()
	}, detail))
}

// endpointPath names one of the caller's subscriptions.
type endpointPath struct {
	ID string `path:"id" json:"-" format:"ksuid"`
}

// getEndpoint serves GET /webhook-subs/:id.
func (h *Handlers) getEndpoint(c *fiber.Ctx, req *endpointPath) error {
	p, _ := auth.User(c)
	sub, err := h.store.Subscription(c.UserContext(), p.UserID, req.ID)
	if err != nil {
		return owned(err)
	}
	return c.JSON(detail(sub))
}

// eventsPatch is the events field of a PATCH: absent leaves the list as it
// is, null means every event, a list names the types.
type eventsPatch struct {
	set, null bool
	list      []string
	problem   string
}

// UnmarshalJSON records the value or what is wrong with it.
func (e *eventsPatch) UnmarshalJSON(b []byte) error {
	*e = eventsPatch{set: true}
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		e.null = true
		return nil
	}
	if err := json.Unmarshal(b, &e.list); err != nil {
		e.problem = "must be an array of event types, or null for every event"
	} else if e.list == nil {
		e.list = []string{}
	}
	return nil
}

// PrepareJSONSchema describes the field as what a client sends.
func (eventsPatch) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithType(jsonschema.Type{SliceOfSimpleTypeValues: []jsonschema.SimpleType{jsonschema.Array, jsonschema.Null}}).WithItems(*(&jsonschema.Items{}).WithSchemaOrBool(
		jsonschema.String.ToSchemaOrBool())).
		WithDescription("event types to receive (GET /api/platform/events); null for every event; left out: unchanged")
	s.Properties = nil
	return nil
}

// secretPatch is the secret field of a PATCH: absent leaves it, null mints
// a new whsec_ secret (returned once), a string sets it.
type secretPatch struct {
	set, null bool
	value     string
	problem   string
}

// UnmarshalJSON records the value or what is wrong with it.
func (p *secretPatch) UnmarshalJSON(b []byte) error {
	*p = secretPatch{set: true}
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		p.null = true
		return nil
	}
	if err := json.Unmarshal(b, &p.value); err != nil {
		p.problem = "must be a string, or null to have the server mint one"
	}
	return nil
}

// PrepareJSONSchema describes the field as what a client sends.
func (secretPatch) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithType(jsonschema.Type{SliceOfSimpleTypeValues: []jsonschema.SimpleType{jsonschema.String, jsonschema.Null}}).WithMinLength(MinSecret).WithMaxLength(MaxSecret).
		WithDescription("a new signing secret; null: the server mints a whsec_ secret and returns it once, in this answer; left out: unchanged")
	s.Properties = nil
	return nil
}

// patchEndpointRequest is PATCH /webhook-subs/:id: every field optional.
type patchEndpointRequest struct {
	ID      string      `path:"id" json:"-" format:"ksuid"`
	URL     *string     `json:"url" maxLength:"2048" description:"a new endpoint URL, checked as on create"`
	Events  eventsPatch `json:"events"`
	Enabled *bool       `json:"enabled" description:"false pauses the endpoint: no new deliveries, queued ones wait; true resumes it"`
	Secret  secretPatch `json:"secret"`
	// ExpiresIn is the overlap of a secret rotation, as on PATCH /me/webhook.
	ExpiresIn *int64 `json:"expiresIn" minimum:"0" maximum:"172800" description:"with secret: seconds the previous secret keeps signing beside the new one: 86400 (24 h) when left out, at most 172800 (48 h); 0 stops it at once"`
	// Password and Code re-authenticate a move to a new url.
	Password string `json:"password" maxLength:"128" description:"with url: the caller's current password (a new destination is a new endpoint); the owner is mailed a notice"`
	Code     string `json:"code" maxLength:"32" description:"with url, when two-factor is on: a current TOTP code or an unused recovery code"`
}

// patchEndpoint serves PATCH /webhook-subs/:id: url, events, enabled and
// secret, each only when sent. Ownership is checked first: an endpoint that
// is not the caller's is 404 whatever the body holds, so the answer says
// nothing about it (nor is the URL resolved for a stranger).
func (h *Handlers) patchEndpoint(c *fiber.Ctx, req *patchEndpointRequest) error {
	p, _ := auth.User(c)
	if _, err := h.store.Subscription(c.UserContext(), p.UserID, req.ID); err != nil {
		return owned(err)
	}
	var v bind.Validator
	var patch store.Patch
	if req.URL != nil {
		u := checkURL(c.UserContext(), &v, h.cfg.Resolver, *req.URL, h.cfg.AllowPrivate)
		patch.URL = &u
		v.Check(req.Password != "", "password", "required to move an endpoint to a new url: the caller's current password")
	}
	switch e := req.Events; {
	case e.problem != "":
		v.Fail("events", e.problem)
	case e.null:
		patch.ClearEvents = true
	case e.set:
		patch.Events = checkEvents(&v, e.list)
	}
	if req.Secret.problem != "" {
		v.Fail("secret", req.Secret.problem)
	} else if req.Secret.set && !req.Secret.null {
		checkSecret(&v, req.Secret.value)
	}
	patch.Enabled = req.Enabled
	if err := v.Err(); err != nil {
		return err
	}
	if patch.URL != nil {
		// A new destination is a new endpoint: the same fresh password, and
		// the all-events audience only if the caller may give it now.
		if err := h.cfg.Reauth.Reauthenticate(c, p.UserID, req.Password, req.Code); err != nil {
			return err
		}
		all, err := h.allEvents(c, p)
		if err != nil {
			return err
		}
		patch.AllEvents = all
	}
	var clear string
	if req.Secret.set {
		sealed, m, err := h.sealSecret(p.UserID, req.Secret.value)
		if err != nil {
			return err
		}
		patch.Secret, clear = &sealed, m
	}
	now := h.now().UTC()
	if req.Secret.set {
		patch.PreviousUntil = previousUntil(req.ExpiresIn, now)
	}
	sub, err := h.store.Update(c.UserContext(), p.UserID, req.ID, patch, now)
	if err != nil {
		return owned(err)
	}
	if patch.URL != nil {
		h.notifyEndpoint(c, p.UserID, sub.URL)
	}
	out := schemas.WebhookEndpointPatched{WebhookSubscriptionDetail: detail(sub), Secret: clear, PreviousSecretExpiresAt: patch.PreviousUntil}
	return c.JSON(out)
}

// deleteEndpoint serves DELETE /webhook-subs/:id: the endpoint and its
// delivery log are removed; no further attempt is made.
func (h *Handlers) deleteEndpoint(c *fiber.Ctx, req *endpointPath) error {
	return h.remove(c, req.ID)
}

// deletePrimary serves DELETE /me/webhook.
func (h *Handlers) deletePrimary(c *fiber.Ctx, _ *meRequest) error {
	return h.remove(c, "")
}

func (h *Handlers) remove(c *fiber.Ctx, id string) error {
	p, _ := auth.User(c)
	if err := h.store.Delete(c.UserContext(), p.UserID, id); err != nil {
		return owned(err)
	}
	return c.SendStatus(http.StatusNoContent)
}

// meRequest is the request of an operation on the caller's primary
// endpoint; it has no parameters.
type meRequest struct{}
