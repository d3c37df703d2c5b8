package platform

import (
	"context"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/server"
)

// HealthAnswer is the body of a module's GET /health: ok, or degraded when
// its database (or a count it reports) does not answer. Modules that report
// counts embed it in their own answer type (HealthOf).
type HealthAnswer struct {
	Status   string `json:"status" required:"true" enum:"ok,degraded"`
	Database string `json:"database" required:"true" enum:"ok,unreachable"`
	// Detail says what is degraded when the database answers but the
	// module's counts do not.
	Detail string `json:"detail,omitempty" enum:"counts unavailable"`
}

// Document is an OpenAPI 3.0 document (a module slice, the full or the
// complete document), described to its top-level fields: its paths and
// components follow the OpenAPI 3.0 specification.
type Document struct {
	OpenAPI    string                    `json:"openapi" required:"true" enum:"3.0.3"`
	Info       OpenAPIInfo               `json:"info" required:"true"`
	Servers    []OpenAPIServer           `json:"servers,omitempty"`
	Tags       []OpenAPITag              `json:"tags,omitempty"`
	Paths      map[string]map[string]any `json:"paths" required:"true" description:"path items by path: operations by method"`
	Components map[string]any            `json:"components,omitempty" description:"schemas and securitySchemes"`
	// TagGroups group the module tags in Redoc's navigation (the complete
	// document).
	TagGroups []OpenAPITagGroup `json:"x-tagGroups,omitempty"`
}

// OpenAPITagGroup is a named group of tags (Redoc's x-tagGroups).
type OpenAPITagGroup struct {
	Name string   `json:"name" required:"true"`
	Tags []string `json:"tags" required:"true"`
}

// OpenAPIInfo is a document's info.
type OpenAPIInfo struct {
	Title       string         `json:"title" required:"true"`
	Version     string         `json:"version" required:"true"`
	Description string         `json:"description,omitempty"`
	License     map[string]any `json:"license,omitempty"`
}

// OpenAPIServer is one of a document's servers.
type OpenAPIServer struct {
	URL         string `json:"url" required:"true"`
	Description string `json:"description,omitempty"`
}

// OpenAPITag is one of a document's tags: a module.
type OpenAPITag struct {
	Name        string `json:"name" required:"true"`
	Description string `json:"description,omitempty"`
	DisplayName string `json:"x-displayName,omitempty"`
}

// Basics registers the two routes every module serves without a token:
// GET /health (health, e.g. Health(db, nil)) and GET /openapi.json (the
// module's slice, served by doc).
func Basics(g server.Router, module string, health, doc fiber.Handler) {
	BasicsOf(g, module, health, HealthAnswer{}, doc)
}

// BasicsOf is Basics for a module whose health answer adds counts of its
// own: answer is a value of the type its health handler encodes (a struct
// embedding HealthAnswer, answered by HealthOf).
func BasicsOf(g server.Router, module string, health fiber.Handler, answer any, doc fiber.Handler) {
	registerHealth(g, health, answer)
	server.Get(g, "/openapi.json", server.Op[server.NoRequest]{
		Summary: "OpenAPI 3.0 slice of the " + module + " module", Public: true,
		Description: "The OpenAPI document of the " + module + " module's routes. Read-only.",
		Handle:      serveDoc(doc),
		Responses:   []server.Response{server.Answers(http.StatusOK, "the document", Document{})},
	})
}

// registerHealth declares GET /health answering answer (200) or a bare
// HealthAnswer (503).
func registerHealth(g server.Router, health fiber.Handler, answer any) {
	server.Get(g, "/health", server.Op[server.NoRequest]{
		Summary:     "Liveness and database reachability",
		Description: "Reports whether the module and its database answer (503 degraded when the database does not). Read-only.",
		Public:      true,
		Handle:      func(c *fiber.Ctx, _ *server.NoRequest) error { return health(c) },
		Responses: []server.Response{
			server.Answers(http.StatusOK, "alive, and the database answers", answer),
			server.Answers(http.StatusServiceUnavailable, "degraded: the database (or a count) does not answer", HealthAnswer{}),
		},
	})
}

// HealthOf returns a health handler whose answer carries the module's
// counts: once the database answers, answer builds the body (T embeds
// HealthAnswer, given as base). It answers 503 with a bare HealthAnswer
// when the database does not answer within two seconds (database
// unreachable) or when answer fails (detail "counts unavailable").
func HealthOf[T any](db Pinger, answer func(ctx context.Context, base HealthAnswer) (T, error)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
		defer cancel()
		if err := db.Ping(ctx); err != nil {
			return c.Status(http.StatusServiceUnavailable).JSON(HealthAnswer{Status: "degraded", Database: "unreachable"})
		}
		body, err := answer(ctx, HealthAnswer{Status: "ok", Database: "ok"})
		if err != nil {
			return c.Status(http.StatusServiceUnavailable).JSON(HealthAnswer{Status: "degraded", Database: "ok", Detail: "counts unavailable"})
		}
		return c.JSON(body)
	}
}
