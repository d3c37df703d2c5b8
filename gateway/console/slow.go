package console

import (
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
)

// SlowRequests lists the latest slow requests of this gateway process
// (*server.Server).
type SlowRequests interface {
	SlowRequests() []server.SlowRequest
}

var _ SlowRequests = (*server.Server)(nil)

// SlowView is what the console shows of slow requests: where they come
// from, the threshold they passed, and the tracing UI's URL of a trace
// ({traceId} in it stands for the id; "" links none).
type SlowView struct {
	Source    SlowRequests
	Threshold time.Duration
	TraceURL  string
}

// registerSlow mounts GET /slow-requests on g.
func (h *Handlers) registerSlow(g server.Router, guards ...fiber.Handler) {
	server.Get(g, "/slow-requests", server.Op[server.NoRequest]{
		Summary: "The latest slow requests of this gateway process, with their trace ids (fiat admin)",
		Description: "Requests this gateway process answered in SLOW_REQUEST_THRESHOLD or more, newest first, at most 50: " +
			"each names its route, status, time and trace id, the traceId of its log lines on every process it crossed " +
			"and of its spans, linked to the tracing UI when TRACE_URL_TEMPLATE is set. Each gateway process keeps its own. Read-only.",
		Role: adminRole, Handle: h.slowRequests,
		Responses: []server.Response{server.Answers(http.StatusOK, "the latest slow requests, newest first", schemas.ConsoleSlowRequests{})},
	}, guards...)
}

func (h *Handlers) slowRequests(c *fiber.Ctx, _ *server.NoRequest) error {
	out := schemas.ConsoleSlowRequests{ThresholdMs: h.slow.Threshold.Milliseconds(), Items: []schemas.ConsoleSlowRequest{}}
	for _, r := range h.slow.Source.SlowRequests() {
		item := schemas.ConsoleSlowRequest{At: r.At.UTC(), Method: r.Method, Route: r.Route, Status: r.Status,
			Ms: float64(r.Took.Microseconds()) / 1000, TraceID: r.TraceID, RequestID: r.RequestID}
		if h.slow.TraceURL != "" && r.TraceID != "" {
			u := strings.ReplaceAll(h.slow.TraceURL, "{traceId}", r.TraceID)
			item.TraceURL = &u
		}
		out.Items = append(out.Items, item)
	}
	return c.JSON(out)
}
