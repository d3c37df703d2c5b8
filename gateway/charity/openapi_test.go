package charity

import (
	"testing"
	"time"

	"github.com/fintech/platform/gateway/server/servertest"
)

type noWriter struct{ Writer }
type noReader struct{ Reader }
type noStats struct{ Stats }

// TestOpenAPI builds the slice from the routes Register really declares.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	s := servertest.New()
	next := servertest.Pass
	h, err := NewHandlers(noWriter{}, noReader{}, servertest.Sender{}, noStats{}, servertest.DB{}, next, next, next, time.Now, s.Routes,
		Config{PublicBaseURL: "https://example.com/"})
	if err != nil {
		t.Fatal(err)
	}
	h.Register(s.Root())
	doc := servertest.Document(t, s, Prefix+"/openapi.json")
	paths := doc["paths"].(map[string]any)
	if len(paths) != 7 {
		t.Fatalf("paths = %d: %v", len(paths), paths)
	}
	read := paths[Prefix+"/campaigns/{id}"].(map[string]any)["get"].(map[string]any)
	if sec := read["security"].([]any); len(sec) != 0 {
		t.Fatalf("a campaign read needs no token: %v", sec)
	}
	donate := paths[Prefix+"/campaigns/{id}/donations"].(map[string]any)["post"].(map[string]any)
	params := donate["parameters"].([]any)
	if len(params) != 2 || params[1].(map[string]any)["name"] != "Idempotency-Key" {
		t.Fatalf("donate parameters = %v", params)
	}
	for _, code := range []string{"201", "400", "401", "403", "404", "409", "422"} {
		if _, ok := donate["responses"].(map[string]any)[code]; !ok {
			t.Fatalf("donate lacks %s: %v", code, donate["responses"])
		}
	}
	approve := paths[Prefix+"/campaigns/{id}/approve"].(map[string]any)["post"].(map[string]any)
	if body := approve["requestBody"].(map[string]any); body["required"] != false {
		t.Fatalf("the approve body is optional: %v", body)
	}
	if approve["x-required-role"] != adminRole {
		t.Fatalf("approve = %v", approve)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for _, name := range []string{"Campaign", "DonationResult", "CampaignList", "CharityStats", "Error"} {
		if _, ok := schemas[name]; !ok {
			t.Fatalf("no %s schema among %v", name, schemas)
		}
	}
	status := schemas["Campaign"].(map[string]any)["properties"].(map[string]any)["status"].(map[string]any)
	if len(status["enum"].([]any)) != 3 {
		t.Fatalf("Campaign.status = %v", status)
	}
	goal := schemas["CreateCampaignRequest"].(map[string]any)["properties"].(map[string]any)["goalKzt"].(map[string]any)
	if goal["minimum"] != float64(1) || goal["type"] != "integer" {
		t.Fatalf("goalKzt = %v", goal)
	}
}
