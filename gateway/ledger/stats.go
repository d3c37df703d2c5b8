package ledger

import (
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/clickhouse"
)

// stats answers the rolling counts from the analytics copy; 503 when it
// does not answer.
func (h *Handlers) stats(c *fiber.Ctx, _ *server.NoRequest) error {
	now := h.now().UTC()
	st, err := h.analytics.LedgerStats(c.UserContext(), now)
	if err != nil {
		return apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "ledger statistics are unavailable; retry shortly")
	}
	out := schemas.LedgerStats{Totals: windows(st.Totals), ByKind: make(map[string]schemas.LedgerWindows, len(st.ByKind)),
		AsOf: now.Truncate(time.Second).Format(time.RFC3339), Source: "clickhouse"}
	for k, w := range st.ByKind {
		out.ByKind[k] = windows(w)
	}
	return c.JSON(out)
}

func windows(w clickhouse.Windows) schemas.LedgerWindows {
	return schemas.LedgerWindows{Last24h: w.Last24h, Last7d: w.Last7d, Last30d: w.Last30d}
}
