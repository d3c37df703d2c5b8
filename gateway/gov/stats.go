package gov

import (
	"encoding/json"
	"math/big"
	"net/http"
	"sort"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/clickhouse"
)

// TopCategories is how many categories /stats lists.
const TopCategories = 10

// Stats is the answer of GET /stats (decisions.md, "Details that apply
// across the modules still to build").
type Stats struct {
	ByStatus map[string]int64 `json:"byStatus"`
	// MeanTurnout is the mean ballot count of closed (executed or rejected)
	// proposals, 0 when none is closed.
	MeanTurnout   json.Number     `json:"meanTurnout"`
	TopCategories []CategoryCount `json:"topCategories"`
	// AsOf and Source say when and from where the answer was read (the
	// ClickHouse copy lags Postgres by the sink's delay).
	AsOf   string `json:"asOf,omitempty"`
	Source string `json:"source,omitempty"`
}

// CategoryCount is the number of proposals of a category (every status).
type CategoryCount struct {
	Category string `json:"category"`
	Count    int64  `json:"count"`
}

// ComputeStats folds the per-(status, category) counts into the answer:
// every status listed, categories by count descending then name.
func ComputeStats(rows []clickhouse.GovStatusCount) Stats {
	st := Stats{ByStatus: map[string]int64{}, TopCategories: []CategoryCount{}}
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
		st.TopCategories = append(st.TopCategories, CategoryCount{Category: c, Count: n})
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
func (h *Handlers) stats(c *fiber.Ctx) error {
	now := h.d.Now().UTC().Truncate(time.Second)
	rows, err := h.d.Analytics.GovStats(c.UserContext())
	if err != nil {
		return apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "governance statistics are unavailable; retry shortly")
	}
	st := ComputeStats(rows)
	st.AsOf, st.Source = now.Format(time.RFC3339), "clickhouse"
	return c.JSON(st)
}
