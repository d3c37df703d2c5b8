package reputation

import (
	"testing"

	"github.com/fintech/platform/storage/clickhouse"
)

func TestComputeStats(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		dist   []clickhouse.ScoreCount
		users  int64
		mean   float64
		median float64
		titan  int64
	}{
		{"empty", nil, 0, 0, 0, 0},
		{"one", []clickhouse.ScoreCount{{Score: 7, Rank: "seedling", Users: 1}}, 1, 7, 7, 0},
		{"odd", []clickhouse.ScoreCount{{Score: -2, Rank: "seedling", Users: 1}, {Score: 10, Rank: "sprout", Users: 1}, {Score: 1000, Rank: "titan", Users: 1}}, 3, 336, 10, 1},
		{"even averages the middle two", []clickhouse.ScoreCount{{Score: 1, Rank: "seedling", Users: 1}, {Score: 10, Rank: "sprout", Users: 2}, {Score: 60, Rank: "steady", Users: 1}}, 4, 20.25, 10, 0},
		{"even across groups", []clickhouse.ScoreCount{{Score: 0, Rank: "seedling", Users: 2}, {Score: 50, Rank: "steady", Users: 2}}, 4, 25, 25, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := ComputeStats(tt.dist)
			if st.RankedUsers != tt.users || st.MeanScore != tt.mean || st.MedianScore != tt.median || st.CountPerRank["titan"] != tt.titan {
				t.Fatalf("%+v", st)
			}
			if len(st.CountPerRank) != 5 {
				t.Fatalf("every rank is listed: %v", st.CountPerRank)
			}
		})
	}
}
