package console

import (
	"context"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/audit"
)

// Audits reads the background audit's last run.
type Audits interface {
	Latest(ctx context.Context) (audit.Run, bool, error)
}

var _ Audits = (*audit.Store)(nil)

// registerAudit mounts GET /audit on g.
func (h *Handlers) registerAudit(g server.Router, guards ...fiber.Handler) {
	server.Get(g, "/audit", server.Op[server.NoRequest]{
		Summary:     "The background audit's last run (fiat admin)",
		Description: "The checks the platform ran last in the background (the ledger chain, every record with one ledger entry, every entry with its record), each ok, FAILED or SKIPPED with its detail. The console shows an alarm while one failed; `platform verify` runs them all on demand. Read-only.",
		Role:        adminRole, Handle: h.audit,
		Responses: []server.Response{server.Answers(http.StatusOK, "the last run; ranAt null before the first", schemas.ConsoleAudit{})},
	}, guards...)
}

func (h *Handlers) audit(c *fiber.Ctx, _ *server.NoRequest) error {
	run, ok, err := h.audits.Latest(c.UserContext())
	if err != nil {
		return err
	}
	out := schemas.ConsoleAudit{Checks: []schemas.ConsoleAuditCheck{}}
	if ok {
		at := run.At.UTC()
		out.RanAt = &at
	}
	for _, r := range run.Results {
		out.Checks = append(out.Checks, schemas.ConsoleAuditCheck{Check: r.Check, Status: string(r.Status), Detail: r.Detail})
	}
	out.Failed = len(run.Failed())
	return c.JSON(out)
}
