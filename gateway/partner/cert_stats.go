package partner

import (
	"math"

	"github.com/gofiber/fiber/v2"
)

// certStatsResponse is the planet stats resource (decisions.md: all for the
// caller).
type certStatsResponse struct {
	TotalArtifacts int64 `json:"totalArtifacts"` // distinct artifactVersionIds
	VerifiedCount  int64 `json:"verifiedCount"`  // payouts
	// TrustWeight is verifiedCount / totalArtifacts, 0 when there are none,
	// rounded to 4 decimals.
	TrustWeight float64 `json:"trustWeight"`
}

// certStats answers the caller's certification statistics.
func (h *Handlers) certStats(c *fiber.Ctx) error {
	st, err := h.reader.CertStats(c.UserContext(), callerEmail(c))
	if err != nil {
		return err
	}
	out := certStatsResponse{TotalArtifacts: st.Artifacts, VerifiedCount: st.Payouts}
	if st.Artifacts > 0 {
		out.TrustWeight = math.Round(float64(st.Payouts)/float64(st.Artifacts)*10_000) / 10_000
	}
	return c.JSON(out)
}
