package reputation

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/gofiber/fiber/v2"
	"github.com/swaggest/jsonschema-go"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/commands"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// eventRequest is the body of POST /events.
type eventRequest struct {
	UserID       string         `json:"userId" required:"true" format:"ksuid" description:"the user the event is about"`
	Kind         string         `json:"kind" required:"true" minLength:"1" maxLength:"64"`
	SourceModule string         `json:"sourceModule" required:"true" minLength:"1" maxLength:"64"`
	Weight       *weight        `json:"weight" required:"true" nullable:"false"`
	SourceID     string         `json:"sourceId" maxLength:"256" description:"names the originating record: a re-sent event is applied once"`
	Meta         map[string]any `json:"meta" description:"at most 16 KiB of JSON"`
	// ServiceKey is read by the authorization before binding; it is
	// declared here so that the document states it.
	ServiceKey string `header:"X-Reputation-Service-Key" json:"-" description:"the platform's reputation service key, instead of an admin bearer token"`
	weight     int64
}

// weight keeps the raw JSON of the weight so that only an integer literal
// passes (a string or a fraction is a validation failure, not a JSON error).
type weight []byte

// PrepareJSONSchema describes the weight as the integer it must be.
func (weight) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithType(jsonschema.Integer.Type()).WithMinimum(-schemas.ReputationMaxWeight).WithMaximum(schemas.ReputationMaxWeight).
		WithDescription("the signed change the event makes to the score")
	s.Items = nil
	s.Format = nil
	return nil
}

// UnmarshalJSON records the raw value.
func (w *weight) UnmarshalJSON(b []byte) error {
	*w = append((*w)[:0], b...)
	return nil
}

// Validate checks what only the request has (the weight as sent, the meta
// object's size, the source module an admin must name) and the event's own
// rule (schemas.ReputationEvent.Validate), reporting every field at once.
func (req *eventRequest) Validate() error {
	var v bind.Validator // sourceModule's presence and length are bound by its tags
	if req.Weight == nil {
		v.Fail("weight", "is required")
	} else {
		n, err := strconv.ParseInt(string(*req.Weight), 10, 64)
		switch {
		case err != nil:
			v.Fail("weight", "must be an integer")
		case n < -schemas.ReputationMaxWeight || n > schemas.ReputationMaxWeight:
			v.Fail("weight", "must be between -1000 and 1000")
		}
		req.weight = n
	}
	if req.Meta != nil {
		if b, err := json.Marshal(req.Meta); err != nil || len(b) > schemas.ReputationMaxMeta {
			v.Fail("meta", "must be a JSON object of at most 16 KiB")
		}
	}
	var problems schemas.FieldProblems
	if errors.As(req.event().Validate(), &problems) {
		for field, reason := range problems {
			v.Fail(field, reason)
		}
	}
	return v.Err()
}

// event is the command the request asks for.
func (req *eventRequest) event() schemas.ReputationEvent {
	return schemas.ReputationEvent{UserID: req.UserID, Kind: req.Kind, SourceModule: req.SourceModule, Weight: req.weight,
		SourceID: req.SourceID, Meta: req.Meta}
}

// post queues the event on the user's partition and answers the applier's
// reply.
func (h *Handlers) post(c *fiber.Ctx, req *eventRequest) error {
	actor, _ := c.Locals(actorKey).(string)
	env, err := schemas.New(schemas.TypeReputationEvent, req.UserID, actor, req.event(), h.now())
	if err != nil {
		return err
	}
	return commands.Exchange(c, h.bus, topics.ReputationCommands, env,
		commands.RequestIdempotency(c, actor, "POST "+Prefix+"/events"))
}

// me answers the caller's score, rank and last 50 events.
