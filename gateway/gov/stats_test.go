package gov

import (
	"testing"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/clickhouse"
)

func TestComputeStats(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		rows    []clickhouse.GovStatusCount
		status  map[string]int64
		turnout string
		top     []schemas.GovCategoryCount
	}{
		{"empty", nil, map[string]int64{"draft": 0, "open": 0, "executed": 0, "rejected": 0}, "0", []schemas.GovCategoryCount{}},
		{"mixed", []clickhouse.GovStatusCount{
			{Status: "draft", Category: "b", Proposals: 2},
			{Status: "open", Category: "a", Proposals: 1},
			{Status: "executed", Category: "a", Proposals: 2, Ballots: 7},
			{Status: "rejected", Category: "c", Proposals: 1, Ballots: 0},
			{Status: "bogus", Category: "z", Proposals: 9},
		}, map[string]int64{"draft": 2, "open": 1, "executed": 2, "rejected": 1}, "2.333333",
			[]schemas.GovCategoryCount{{Category: "a", Count: 3}, {Category: "b", Count: 2}, {Category: "c", Count: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := ComputeStats(tt.rows)
			if string(st.MeanTurnout) != tt.turnout || len(st.ByStatus) != 4 || len(st.TopCategories) != len(tt.top) {
				t.Fatalf("%+v", st)
			}
			for k, v := range tt.status {
				if st.ByStatus[k] != v {
					t.Fatalf("%s = %d, want %d", k, st.ByStatus[k], v)
				}
			}
			for i := range tt.top {
				if st.TopCategories[i] != tt.top[i] {
					t.Fatalf("top %v, want %v", st.TopCategories, tt.top)
				}
			}
		})
	}
}
