package reputation

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/clickhouse"
)

type Stats = schemas.ReputationStats

// ComputeStats derives the statistics from a score distribution (ascending
// by score): the median of an even count is the mean of the two middle
// scores.
func ComputeStats(dist []clickhouse.ScoreCount) Stats {
	st := Stats{CountPerRank: map[string]int64{}}
	for _, r := range schemas.Ranks() {
		st.CountPerRank[r] = 0
	}
	var sum int64
	for _, d := range dist {
		st.CountPerRank[d.Rank] += d.Users
		st.RankedUsers += d.Users
		sum += d.Score * d.Users
	}
	if st.RankedUsers == 0 {
		return st
	}
	st.MeanScore = float64(sum) / float64(st.RankedUsers)
	at := func(k int64) int64 { // the k-th score (0-based) in ascending order
		for _, d := range dist {
			if k < d.Users {
				return d.Score
			}
			k -= d.Users
		}
		return 0
	}
	n := st.RankedUsers
	if n%2 == 1 {
		st.MedianScore = float64(at(n / 2))
	} else {
		st.MedianScore = float64(at(n/2-1)+at(n/2)) / 2
	}
	return st
}

// stats answers the statistics from the analytics copy; 503 when it does
// not answer.
func (h *Handlers) stats(c *fiber.Ctx, _ *server.NoRequest) error {
	now := h.now().UTC().Truncate(time.Second)
	dist, recent, err := h.analytics.Distribution(c.UserContext(), now.Add(-24*time.Hour))
	if err != nil {
		return unavailable()
	}
	st := ComputeStats(dist)
	st.EventsLast24h, st.AsOf, st.Source = recent, now.Format(time.RFC3339), "clickhouse"
	return c.JSON(st)
}
