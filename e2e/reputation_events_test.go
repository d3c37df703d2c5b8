package e2e

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

func repPost(t testing.TB, p *harness.Platform, headers map[string]string, token string, body any) harness.Response {
	t.Helper()
	return p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/reputation/events", Token: token, Body: body, Headers: headers})
}

var repKey = map[string]string{"X-Reputation-Service-Key": harness.ReputationServiceKey}

func TestReputationEvents(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "rep")
	r := repPost(t, p, repKey, "", map[string]any{"userId": u.ID, "kind": "e2e-bonus", "sourceModule": "e2e", "weight": 12, "meta": map[string]any{"why": "test"}})
	if r.Status != http.StatusCreated {
		t.Fatalf("post: %d %s", r.Status, r.Body)
	}
	res := r.JSON(t)
	if res["eventId"] == nil || res["newScore"].(float64) != 12 || res["previousRank"] != "seedling" || res["newRank"] != "sprout" || res["promoted"] != true {
		t.Fatalf("result: %v", res)
	}
	admin := p.RegisterEmail(t, harness.ReputationAdminEmail)
	r = repPost(t, p, nil, admin.Token, map[string]any{"userId": u.ID, "kind": "e2e-penalty", "sourceModule": "e2e", "weight": -5, "sourceId": "pen-1"})
	if res := r.JSON(t); r.Status != http.StatusCreated || res["newScore"].(float64) != 7 || res["newRank"] != "seedling" || res["promoted"] != false {
		t.Fatalf("admin post: %d %s", r.Status, r.Body)
	}
	// The same source again is applied once.
	r = repPost(t, p, repKey, "", map[string]any{"userId": u.ID, "kind": "e2e-penalty", "sourceModule": "e2e", "weight": -5, "sourceId": "pen-1"})
	if res := r.JSON(t); r.Status != http.StatusOK || res["newScore"].(float64) != 7 || res["idempotent"] != true {
		t.Fatalf("re-sent: %d %s", r.Status, r.Body)
	}

	valid := map[string]any{"userId": u.ID, "kind": "k", "sourceModule": "e2e", "weight": 1}
	tests := []struct {
		name    string
		headers map[string]string
		token   string
		body    any
		status  int
		code    string
	}{
		{"no auth", nil, "", valid, 401, "auth_required"},
		{"wrong key", map[string]string{"X-Reputation-Service-Key": strings.Repeat("x", 40)}, "", valid, 401, "key_invalid"},
		{"short key", map[string]string{"X-Reputation-Service-Key": "short"}, "", valid, 401, "key_invalid"},
		{"not an admin", nil, u.Token, valid, 403, "forbidden"},
		{"unknown user", repKey, "", map[string]any{"userId": "ghost", "kind": "k", "sourceModule": "e2e", "weight": 1}, 404, "user_not_found"},
		{"weight too big", repKey, "", map[string]any{"userId": u.ID, "kind": "k", "sourceModule": "e2e", "weight": 1001}, 422, "validation_failed"},
		{"weight string", repKey, "", map[string]any{"userId": u.ID, "kind": "k", "sourceModule": "e2e", "weight": "1"}, 422, "validation_failed"},
		{"weight fraction", repKey, "", map[string]any{"userId": u.ID, "kind": "k", "sourceModule": "e2e", "weight": 1.5}, 422, "validation_failed"},
		{"no kind", repKey, "", map[string]any{"userId": u.ID, "sourceModule": "e2e", "weight": 1}, 422, "validation_failed"},
		{"malformed", repKey, "", []byte(`{"userId":`), 400, "invalid_json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := repPost(t, p, tt.headers, tt.token, tt.body)
			if r.Status != tt.status || r.JSON(t)["error"] != tt.code {
				t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, tt.status, tt.code)
			}
		})
	}

	me := p.Get(t, "/api/reputation/me", u.Token)
	var mine struct {
		Score  int64            `json:"score"`
		Rank   string           `json:"rank"`
		Events []map[string]any `json:"events"`
	}
	me.Decode(t, &mine)
	if me.Status != 200 || mine.Score != 7 || mine.Rank != "seedling" || len(mine.Events) != 2 || mine.Events[0]["kind"] != "e2e-penalty" {
		t.Fatalf("me: %d %s", me.Status, me.Body)
	}
	rank := p.Get(t, "/api/reputation/rank/"+u.ID, "")
	if rr := rank.JSON(t); rank.Status != 200 || rr["score"].(float64) != 7 || rr["rank"] != "seedling" || rr["email"] != nil {
		t.Fatalf("rank: %d %s", rank.Status, rank.Body)
	}
	if r := p.Get(t, "/api/reputation/rank/ghost", ""); r.Status != 404 {
		t.Fatalf("rank of unknown: %d %s", r.Status, r.Body)
	}
	if r := p.Get(t, "/api/reputation/leaderboard?rank=emperor", ""); r.Status != 422 {
		t.Fatalf("bad rank filter: %d %s", r.Status, r.Body)
	}
	if h := p.Get(t, "/api/reputation/health", "").JSON(t); h["status"] != "ok" || h["rankedUsers"].(float64) < 1 {
		t.Fatalf("health: %v", h)
	}
}

// The leaderboard and the stats are served from ClickHouse: after the sink
// catches up they equal what Postgres holds.
func TestReputationAnalyticsMatchPostgres(t *testing.T) {
	p, pool := ledgerPlatform(t)
	ctx := context.Background()
	weights := []int64{3, 12, 60, 250, 1000, -4, 12}
	for i, w := range weights {
		u := p.Register(t, "lb")
		r := repPost(t, p, repKey, "", map[string]any{"userId": u.ID, "kind": "e2e", "sourceModule": "e2e", "weight": w})
		if r.Status != http.StatusCreated {
			t.Fatalf("post %d: %d %s", i, r.Status, r.Body)
		}
		if i%2 == 0 { // a second event for some users
			if r := repPost(t, p, repKey, "", map[string]any{"userId": u.ID, "kind": "e2e-2", "sourceModule": "e2e", "weight": 1}); r.Status != http.StatusCreated {
				t.Fatalf("second post %d: %d %s", i, r.Status, r.Body)
			}
		}
	}
	type row struct {
		UserID string `json:"userId"`
		Score  int64  `json:"score"`
		Rank   string `json:"rank"`
	}
	var want []row
	rows, err := pool.Query(ctx, `SELECT user_id, score, rank FROM reputation_scores ORDER BY score DESC, user_id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.UserID, &r.Score, &r.Rank); err != nil {
			t.Fatal(err)
		}
		want = append(want, r)
	}
	rows.Close()
	var events int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM reputation_events`).Scan(&events); err != nil {
		t.Fatal(err)
	}

	harness.Eventually(t, 30*time.Second, "the leaderboard to match Postgres", func() bool {
		var lb struct {
			Items []row `json:"items"`
		}
		r := p.Get(t, "/api/reputation/leaderboard?limit=100", "")
		if r.Status != 200 {
			return false
		}
		r.Decode(t, &lb)
		if len(lb.Items) != len(want) {
			return false
		}
		for i := range want {
			if lb.Items[i] != want[i] {
				return false
			}
		}
		return true
	})

	var st struct {
		RankedUsers   int64            `json:"rankedUsers"`
		CountPerRank  map[string]int64 `json:"countPerRank"`
		MeanScore     float64          `json:"meanScore"`
		MedianScore   float64          `json:"medianScore"`
		EventsLast24h int64            `json:"eventsLast24h"`
	}
	p.Get(t, "/api/reputation/stats", "").Decode(t, &st)
	scores := make([]int64, len(want))
	perRank := map[string]int64{}
	var sum int64
	for i, w := range want {
		scores[i] = w.Score
		perRank[w.Rank]++
		sum += w.Score
	}
	sort.Slice(scores, func(i, j int) bool { return scores[i] < scores[j] })
	n := len(scores)
	median := float64(scores[n/2])
	if n%2 == 0 {
		median = float64(scores[n/2-1]+scores[n/2]) / 2
	}
	if st.RankedUsers != int64(n) || st.MeanScore != float64(sum)/float64(n) || st.MedianScore != median || st.EventsLast24h != events {
		t.Fatalf("stats %+v; Postgres: users %d mean %v median %v events %d", st, n, float64(sum)/float64(n), median, events)
	}
	for rank, c := range perRank {
		if st.CountPerRank[rank] != c {
			t.Fatalf("count of %s: %d, Postgres %d", rank, st.CountPerRank[rank], c)
		}
	}
	top := p.Get(t, "/api/reputation/leaderboard?rank=titan&limit=500", "")
	var tl struct {
		Items []row `json:"items"`
		Limit int   `json:"limit"`
	}
	top.Decode(t, &tl)
	if tl.Limit != 100 || len(tl.Items) != int(perRank["titan"]) {
		t.Fatalf("titan leaderboard: %s", top.Body)
	}
}
