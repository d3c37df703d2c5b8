// Package platform serves build information and the per-module health
// endpoints.
package platform

import (
	"context"
	"net/http"
	"runtime"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/server"
)

// Build is what GET /api/platform/version reports.
type Build struct {
	Service     string
	Version     string
	Release     string
	Environment string
	StartedAt   time.Time
}

// Pinger checks that a dependency answers.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Handlers serve /api/platform.
type Handlers struct {
	build Build
	db    Pinger
	now   func() time.Time
}

// NewHandlers builds the handlers.
func NewHandlers(build Build, db Pinger, now func() time.Time) *Handlers {
	return &Handlers{build: build, db: db, now: now}
}

// Register mounts the routes.
func (h *Handlers) Register(r server.Router) {
	g := r.Group("/api/platform")
	g.Get("/version", "Build and version information", h.version)
	g.Get("/health", "Liveness and database reachability", Health(h.db, nil))
	r.Group("/api/auth").Get("/health", "Liveness and database reachability", Health(h.db, nil))
}

type versionResponse struct {
	Service       string    `json:"service"`
	Status        string    `json:"status"`
	Version       string    `json:"version"`
	Release       string    `json:"release"`
	Runtime       string    `json:"runtime"`
	Environment   string    `json:"environment"`
	StartedAt     time.Time `json:"startedAt"`
	UptimeSeconds int64     `json:"uptimeSeconds"`
}

func (h *Handlers) version(c *fiber.Ctx) error {
	return c.JSON(versionResponse{
		Service: h.build.Service, Status: "ok", Version: h.build.Version, Release: h.build.Release,
		Runtime: runtime.Version(), Environment: h.build.Environment, StartedAt: h.build.StartedAt,
		UptimeSeconds: int64(h.now().Sub(h.build.StartedAt).Seconds()),
	})
}

// Health returns a handler reporting liveness and database reachability,
// plus the fields extra adds (counts and the like). It answers 503 when the
// database does not answer within two seconds.
func Health(db Pinger, extra func(ctx context.Context) (map[string]any, error)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
		defer cancel()
		body := map[string]any{"status": "ok", "database": "ok"}
		status := http.StatusOK
		if err := db.Ping(ctx); err != nil {
			body["status"], body["database"] = "degraded", "unreachable"
			status = http.StatusServiceUnavailable
		} else if extra != nil {
			more, err := extra(ctx)
			if err != nil {
				body["status"] = "degraded"
				body["detail"] = "counts unavailable"
				status = http.StatusServiceUnavailable
			}
			for k, v := range more {
				body[k] = v
			}
		}
		return c.Status(status).JSON(body)
	}
}
