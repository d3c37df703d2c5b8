package reputation

import (
	"testing"
	"time"

	"github.com/fintech/platform/gateway/server/servertest"

	"github.com/fintech/platform/gateway/auth/authtest"
)

type noReader struct{ Reader }
type noAnalytics struct{ Analytics }

// TestOpenAPI builds the slice from the routes Register really declares.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	s := servertest.New()
	tokens := authtest.New(t)
	h, err := NewHandlers(servertest.DB{}, noReader{}, noAnalytics{}, servertest.Sender{}, tokens.Authenticator, servertest.Pass,
		time.Now, s.Routes, Config{})
	if err != nil {
		t.Fatal(err)
	}
	h.Register(s.Root())
	doc := servertest.Document(t, s, Prefix+"/openapi.json")
	paths := doc["paths"].(map[string]any)
	if len(paths) != 7 {
		t.Fatalf("paths = %v", paths)
	}
	post := paths["/api/reputation/events"].(map[string]any)["post"].(map[string]any)
	var header bool
	for _, p := range post["parameters"].([]any) {
		header = header || p.(map[string]any)["name"] == HeaderServiceKey
	}
	if !header {
		t.Errorf("POST events does not state %s: %v", HeaderServiceKey, post["parameters"])
	}
	for _, status := range []string{"200", "201", "401", "403", "404", "409", "422"} {
		if _, ok := post["responses"].(map[string]any)[status]; !ok {
			t.Errorf("POST events lacks %s", status)
		}
	}
	comps := doc["components"].(map[string]any)["schemas"].(map[string]any)
	w := comps["EventRequest"].(map[string]any)["properties"].(map[string]any)["weight"].(map[string]any)
	if w["type"] != "integer" || w["minimum"] != float64(-1000) || w["maximum"] != float64(1000) {
		t.Errorf("weight = %v", w)
	}
	rank := comps["ReputationRank"].(map[string]any)["properties"].(map[string]any)["rank"].(map[string]any)
	if len(rank["enum"].([]any)) != 5 {
		t.Errorf("rank = %v", rank)
	}
	board := paths["/api/reputation/leaderboard"].(map[string]any)["get"].(map[string]any)
	if sec := board["security"].([]any); len(sec) != 0 {
		t.Errorf("leaderboard needs a token")
	}
}
