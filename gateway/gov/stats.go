package gov

import (
	"math/big"
	"net/http"
	"sort"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/clickhouse"
)

// TopCategories is how many categories /stats lists.
const TopCategories = 10

// ComputeStats folds the per-(status, category) counts into the answer:
// every status listed, categories by count descending then name.
func ComputeStats(rows []clickhouse.GovStatusCount) schemas.GovStats {
	st := schemas.GovStats{ByStatus: map[string]int64{}, TopCategories: []schemas.GovCategoryCount{}}
	for _, s := range schemas.ProposalStatuses {
		st.ByStatus[s] = 0
	}
	perCat := map[string]int64{}
	var closed, ballots int64
	for _, r := range rows {
		if _, ok := st.ByStatus[r.Status]; !ok {
			continue
		}
		st.ByStatus[r.Status] += r.Proposals
		perCat[r.Category] += r.Proposals
		if r.Status == schemas.ProposalExecuted || r.Status == schemas.ProposalRejected {
			closed += r.Proposals
			ballots += r.Ballots
		}
	}
	st.MeanTurnout = "0"
	if closed > 0 {
		st.MeanTurnout = RatNumber(big.NewRat(ballots, closed))
	}
	for c, n := range perCat {
		st.TopCategories = append(st.TopCategories, schemas.GovCategoryCount{Category: c, Count: n})
	}
	sort.Slice(st.TopCategories, func(i, j int) bool {
		a, b := st.TopCategories[i], st.TopCategories[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Category < b.Category
	})
	if len(st.TopCategories) > TopCategories {
		st.TopCategories = st.TopCategories[:TopCategories]
	}
	return st
}

// stats answers the governance roll-up from the ClickHouse copy of the
// proposal events (it lags Postgres by the sink's delay, never diverges).
func (h *Handlers) stats(c *fiber.Ctx, _ *server.NoRequest) error {
	now := h.now().UTC().Truncate(time.Second)
	rows, err := h.analytics.GovStats(c.UserContext())
	if err != nil {
		return apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "governance statistics are unavailable; retry shortly")
	}
	st := ComputeStats(rows)
	st.AsOf, st.Source = now.Format(time.RFC3339), "clickhouse"
	return c.JSON(st)
}
