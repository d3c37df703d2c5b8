package platform

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/server"
)

// HealthAnswer is the body of a module's GET /health: ok, or degraded when
// its database (or a count it reports) does not answer. Modules may add
// counts of their own.
type HealthAnswer struct {
	Status   string `json:"status" required:"true" enum:"ok,degraded"`
	Database string `json:"database" required:"true" enum:"ok,unreachable"`
}

// Document is an OpenAPI 3.0 document.
type Document map[string]any

// Basics registers the two routes every module serves without a token:
// GET /health (health, e.g. Health(db, nil)) and GET /openapi.json (the
// module's slice, served by doc).
func Basics(g server.Router, module string, health, doc fiber.Handler) {
	BasicsCounting(g, module, "Liveness and database reachability", health, doc, HealthAnswer{})
}

// BasicsCounting is Basics for a module whose health answer adds counts of
// its own (Health with extra): answer is a value of the Go type of that 200
// body (status and database as in HealthAnswer, plus the counts).
func BasicsCounting(g server.Router, module, summary string, health, doc fiber.Handler, answer any) {
	server.Get(g, "/health", server.Op[server.NoRequest]{
		Summary: summary, Public: true,
		Handle:    func(c *fiber.Ctx, _ *server.NoRequest) error { return health(c) },
		Responses: []server.Response{server.Answers(http.StatusOK, "alive, and the database answers", answer)},
	})
	server.Get(g, "/openapi.json", server.Op[server.NoRequest]{
		Summary: "OpenAPI 3.0 slice of the " + module + " module", Public: true,
		Handle:    func(c *fiber.Ctx, _ *server.NoRequest) error { return doc(c) },
		Responses: []server.Response{server.Answers(http.StatusOK, "the document", Document{})},
	})
}
