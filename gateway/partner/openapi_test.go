package partner

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/fintech/platform/gateway/server/servertest"
)

type openDoc struct {
	Paths map[string]map[string]struct {
		Security    []any `json:"security"`
		Parameters  []struct{ Name, In string }
		RequestBody map[string]any `json:"requestBody"`
		Responses   map[string]any `json:"responses"`
	} `json:"paths"`
	Components struct {
		Schemas map[string]struct {
			Required   []string                  `json:"required"`
			Properties map[string]map[string]any `json:"properties"`
		} `json:"schemas"`
	} `json:"components"`
}

// TestOpenAPI builds the slices from the routes Register really declares.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	s := servertest.New()
	h, err := NewHandlers(&fakeStore{}, &fakeStore{}, okPinger{}, servertest.Pass, Secrets{}, time.Now, s.Routes)
	if err != nil {
		t.Fatal(err)
	}
	h.Register(s.Root())
	slice := func(prefix string) openDoc {
		raw, _ := json.Marshal(servertest.Document(t, s, prefix+"/openapi.json"))
		var d openDoc
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	chess := slice(PrefixChess)
	if len(chess.Paths) != 6 {
		t.Fatalf("chess paths = %v", chess.Paths)
	}
	fin := chess.Paths[PrefixChess+"/tournament-finalized"]["post"]
	if len(fin.Security) != 0 || fin.RequestBody == nil {
		t.Fatalf("tournament-finalized = %+v", fin)
	}
	headers := map[string]bool{}
	for _, p := range fin.Parameters {
		if p.In == "header" {
			headers[p.Name] = true
		}
	}
	for _, want := range []string{HeaderSignature, HeaderTimestamp, HeaderChess} {
		if !headers[want] {
			t.Fatalf("tournament-finalized parameters = %+v", fin.Parameters)
		}
	}
	for _, st := range []string{"200", "201", "400", "401", "422"} {
		if _, ok := fin.Responses[st]; !ok {
			t.Fatalf("tournament-finalized lacks %s", st)
		}
	}
	results := chess.Paths[PrefixChess+"/results"]["get"]
	if len(results.Security) != 1 || results.Responses["403"] == nil {
		t.Fatalf("results = %+v", results)
	}
	if _, ok := chess.Components.Schemas["PrizeCountedPage"].Properties["total"]; !ok {
		t.Fatalf("PrizeCountedPage = %+v", chess.Components.Schemas["PrizeCountedPage"])
	}
	place := chess.Components.Schemas["PodiumItem"].Properties["place"]
	if place["type"] != "integer" || place["maximum"] != float64(maxPlace) {
		t.Fatalf("PodiumItem.place = %v", place)
	}
	eco := slice(PrefixEcosystem)
	src := eco.Components.Schemas["SourceEarnings"].Properties["source"]
	if len(src["enum"].([]any)) != 3 {
		t.Fatalf("SourceEarnings.source = %v", src)
	}
	rights := slice(PrefixRights)
	amount := rights.Components.Schemas["RoyaltyRequest"].Properties["amount"]
	if amount["minimum"] != float64(1) || amount["maximum"] != float64(1e15) {
		t.Fatalf("RoyaltyRequest.amount = %v", amount)
	}
}
