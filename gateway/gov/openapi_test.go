package gov

import (
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server/servertest"
	"github.com/fintech/platform/schemas"
)

type noWriter struct{ Writer }
type noReader struct{ Reader }
type noAnalytics struct{ Analytics }

// TestOpenAPI builds the slice from the routes Register really declares.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	s := servertest.New()
	next := servertest.Pass
	h, err := NewHandlers(servertest.DB{}, noWriter{}, noReader{}, noAnalytics{}, noBudgets{}, next, next, time.Now, s.Routes)
	if err != nil {
		t.Fatal(err)
	}
	h.Register(s.Root())
	doc := servertest.Document(t, s, Prefix+"/openapi.json")
	paths := doc["paths"].(map[string]any)
	if len(paths) != 10 {
		t.Fatalf("paths = %d: %v", len(paths), paths)
	}
	votes := paths["/api/gov/proposals/{id}/votes"].(map[string]any)
	post := votes["post"].(map[string]any)
	if _, ok := post["requestBody"]; !ok || len(post["security"].([]any)) != 1 {
		t.Fatalf("vote operation = %v", post)
	}
	for _, code := range []string{"201", "401", "404", "409", "422"} {
		if _, ok := post["responses"].(map[string]any)[code]; !ok {
			t.Errorf("vote lacks %s", code)
		}
	}
	get := votes["get"].(map[string]any)
	if len(get["security"].([]any)) != 0 || get["responses"].(map[string]any)["409"] == nil {
		t.Fatalf("votes list = %v", get)
	}
	closeOp := paths["/api/gov/proposals/{id}/close"].(map[string]any)["post"].(map[string]any)
	if closeOp["responses"].(map[string]any)["403"] == nil || closeOp["x-required-role"] != adminRole {
		t.Fatalf("close = %v", closeOp)
	}
	if _, ok := closeOp["requestBody"]; ok {
		t.Fatalf("close has a body: %v", closeOp)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	create := schemas["CreateProposalRequest"].(map[string]any)["properties"].(map[string]any)
	if mode := create["voteMode"].(map[string]any); len(mode["enum"].([]any)) != 3 {
		t.Fatalf("voteMode = %v", mode)
	}
	if q := create["quorum"].(map[string]any); q["type"] != "integer" || q["minimum"] != float64(1) {
		t.Fatalf("quorum = %v", q)
	}
	if th := create["threshold"].(map[string]any); th["type"] != "number" || th["exclusiveMaximum"] != true || th["maximum"] != float64(1) || th["minimum"] != float64(0) {
		t.Fatalf("threshold = %v", th)
	}
	proposal := schemas["Proposal"].(map[string]any)["properties"].(map[string]any)
	if st := proposal["status"].(map[string]any); len(st["enum"].([]any)) != 4 {
		t.Fatalf("status = %v", st)
	}
	if th := proposal["threshold"].(map[string]any); th["type"] != "number" {
		t.Fatalf("Proposal.threshold = %v", th)
	}
	if _, ok := schemas["ProposalPage"]; !ok {
		t.Fatalf("no ProposalPage among %v", schemas)
	}
	health := paths["/api/gov/health"].(map[string]any)["get"].(map[string]any)
	if len(health["security"].([]any)) != 0 {
		t.Fatalf("health = %v", health)
	}
}

type noBudgets struct{}

func (noBudgets) Take(*fiber.Ctx, schemas.Budget, string) (*ratelimit.Ticket, error) { return nil, nil }
