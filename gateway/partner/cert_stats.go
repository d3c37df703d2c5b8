package partner

import (
	"math"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
)

// certStats answers the caller's certification statistics.
func (h *Handlers) certStats(c *fiber.Ctx, _ *server.NoRequest) error {
	st, err := h.reader.CertStats(c.UserContext(), callerEmail(c))
	if err != nil {
		return err
	}
	out := schemas.CertStats{TotalArtifacts: st.Artifacts, VerifiedCount: st.Payouts}
	if st.Artifacts > 0 {
		out.TrustWeight = math.Round(float64(st.Payouts)/float64(st.Artifacts)*10_000) / 10_000
	}
	return c.JSON(out)
}
