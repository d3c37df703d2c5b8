package schemas

import "testing"

func TestRankOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		score int64
		want  string
	}{
		{-500, "seedling"}, {-1, "seedling"}, {0, "seedling"}, {9, "seedling"},
		{10, "sprout"}, {49, "sprout"}, {50, "steady"}, {199, "steady"},
		{200, "strong"}, {999, "strong"}, {1000, "titan"}, {1 << 40, "titan"},
	}
	for _, tt := range tests {
		if got := RankOf(tt.score); got != tt.want {
			t.Errorf("RankOf(%d) = %s, want %s", tt.score, got, tt.want)
		}
	}
}
