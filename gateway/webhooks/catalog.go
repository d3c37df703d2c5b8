package webhooks

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/swaggest/jsonschema-go"

	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
)

// EventType is one entry of the event catalog: what a delivery of that type
// carries in `data`, as a JSON Schema reflected from the Go type the
// producer builds the event from.
type EventType struct {
	Type       string         `json:"type" required:"true"`
	Module     string         `json:"module" required:"true" description:"the module, as in the delivery payload"`
	Meaning    string         `json:"meaning" required:"true"`
	DataSchema map[string]any `json:"dataSchema" required:"true" description:"JSON Schema (draft 2020-12 subset) of the payload's data"`
}

// Catalog is the answer of GET /api/platform/events.
type Catalog struct {
	Items []EventType `json:"items" required:"true"`
}

// BuildCatalog reflects the data type of every event of
// schemas.EventCatalog into a JSON Schema.
func BuildCatalog() (Catalog, error) {
	r := jsonschema.Reflector{}
	// A json.Number is encoded as the number it holds.
	r.AddTypeMapping(json.Number(""), float64(0))
	out := Catalog{Items: []EventType{}}
	for _, e := range schemas.EventCatalog() {
		s, err := r.Reflect(e.Data, jsonschema.InlineRefs)
		if err != nil {
			return Catalog{}, fmt.Errorf("reflect the data of %s: %w", e.Type, err)
		}
		raw, err := json.Marshal(s)
		if err != nil {
			return Catalog{}, fmt.Errorf("encode the schema of %s: %w", e.Type, err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			return Catalog{}, fmt.Errorf("decode the schema of %s: %w", e.Type, err)
		}
		out.Items = append(out.Items, EventType{Type: e.Type, Module: e.Module, Meaning: e.Meaning, DataSchema: m})
	}
	return out, nil
}

// registerCatalog mounts GET /api/platform/events: public, like the API
// documents, and built once.
func (h *Handlers) registerCatalog(r server.Router) error {
	cat, err := BuildCatalog()
	if err != nil {
		return err
	}
	body, err := json.Marshal(cat)
	if err != nil {
		return err
	}
	server.Get(r.Group("/api/platform").KeyArea(server.NoKeys), "/events", server.Op[server.NoRequest]{
		Summary:     "Every event type webhooks and event streams deliver, with the JSON Schema of its data",
		Description: "Lists every event type the platform delivers to webhooks and event streams, with its module, meaning and the JSON Schema of its data; any listed type may be named in a subscription's events. Changes nothing.",
		Public:      true,
		Handle: func(c *fiber.Ctx, _ *server.NoRequest) error {
			c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
			c.Set(fiber.HeaderCacheControl, "public, max-age=300")
			return c.Status(http.StatusOK).Send(body)
		},
		Responses: []server.Response{server.Answers(http.StatusOK,
			"the event catalog: type, module, meaning and dataSchema of each; every type may be named in a subscription's events",
			Catalog{})},
	})
	return nil
}
