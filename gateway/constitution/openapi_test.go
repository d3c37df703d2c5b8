package constitution

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/gateway/server/servertest"

	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
)

type noStore struct {
	Scenarios
	Usage
	Catalog
}

// registered builds the handlers with trivial fakes and returns the server
// with the routes Register really declares.
func registered(t *testing.T) *server.Server {
	t.Helper()
	s := servertest.New()
	next := servertest.Pass
	h, err := NewHandlers(noStore{}, noStore{}, noStore{}, Builtin{}, servertest.DB{}, next, next, time.Now, s.Routes, Config{AILimit: 5})
	if err != nil {
		t.Fatal(err)
	}
	h.Register(s.Root())
	return s
}

func TestOpenAPI(t *testing.T) {
	t.Parallel()
	srv := registered(t)
	routes := srv.Routes()
	for _, r := range routes {
		if r.Decl == nil {
			t.Errorf("%s %s is not a typed declaration", r.Method, r.Path)
		}
	}
	for _, prefix := range []string{Prefix, PlanetPrefix, ProxyBase + Prefix, ProxyBase + PlanetPrefix} {
		doc := servertest.Document(t, srv, prefix+"/openapi.json")
		paths := doc["paths"].(map[string]any)
		want := map[string]int{Prefix: 11, PlanetPrefix: 10}[strings.TrimPrefix(prefix, ProxyBase)]
		if len(paths) != want {
			t.Fatalf("%s: %d paths, want %d: %v", prefix, len(paths), want, keys(paths))
		}
		for p := range paths {
			if !strings.HasPrefix(p, prefix+"/") {
				t.Fatalf("%s: path %s of another module", prefix, p)
			}
		}
		if os.Getenv("DUMP_OPENAPI") != "" {
			raw, _ := json.MarshalIndent(doc, "", "  ")
			t.Logf("%s", raw)
		}
	}

	doc := servertest.Document(t, srv, Prefix+"/openapi.json")
	paths := doc["paths"].(map[string]any)
	ai := paths[Prefix+"/ai-suggest"].(map[string]any)["post"].(map[string]any)
	responses := ai["responses"].(map[string]any)
	for _, status := range []string{"200", "401", "402", "404", "422"} {
		if _, ok := responses[status]; !ok {
			t.Fatalf("ai-suggest lacks %s: %v", status, responses)
		}
	}
	pdf := paths[Prefix+"/pdf"].(map[string]any)["post"].(map[string]any)
	if pdf200, ok := pdf["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)["application/pdf"].(map[string]any); !ok || pdf200["schema"].(map[string]any)["format"] != "binary" {
		t.Fatalf("pdf 200 = %v", pdf["responses"])
	}
	regimes := paths[Prefix+"/public/regimes"].(map[string]any)["get"].(map[string]any)
	if sec := regimes["security"].([]any); len(sec) != 0 {
		t.Fatalf("public/regimes security = %v", sec)
	}
	if _, ok := regimes["responses"].(map[string]any)["304"]; !ok {
		t.Fatalf("public/regimes lacks 304: %v", regimes["responses"])
	}
	comps := doc["components"].(map[string]any)["schemas"].(map[string]any)
	request := comps["ScenarioRequest"].(map[string]any)["properties"].(map[string]any)
	if request["sliders"].(map[string]any)["$ref"] != "#/components/schemas/SliderInput" {
		t.Fatalf("ScenarioRequest.sliders = %v", request["sliders"])
	}
	floor := comps["SliderInput"].(map[string]any)["properties"].(map[string]any)["floor"].(map[string]any)
	if floor["type"] != "integer" || floor["maximum"] != float64(100) {
		t.Fatalf("ScenarioRequest.sliders.floor = %v", floor)
	}
	if _, ok := comps["ConstitutionScenarioPage"]; !ok {
		t.Fatalf("no ConstitutionScenarioPage among %v", keys(comps))
	}

	planet := servertest.Document(t, srv, PlanetPrefix+"/openapi.json")
	list := planet["paths"].(map[string]any)[PlanetPrefix+"/constitution-artifacts"].(map[string]any)["get"].(map[string]any)
	if sec := list["security"].([]any); len(sec) != 0 {
		t.Fatalf("artifact list security = %v", sec)
	}
	names := map[string]bool{}
	for _, p := range list["parameters"].([]any) {
		names[p.(map[string]any)["name"].(string)] = true
	}
	if !names["regime"] || !names["limit"] || !names["cursor"] {
		t.Fatalf("artifact list parameters = %v", list["parameters"])
	}
	vote := planet["paths"].(map[string]any)[PlanetPrefix+"/constitution-artifacts/{id}/vote"].(map[string]any)
	if _, ok := vote["delete"]; !ok {
		t.Fatalf("no DELETE vote: %v", vote)
	}
}

// TestRegimeEnum checks the regime enum of the contract lists the rules'
// regimes in order.
func TestRegimeEnum(t *testing.T) {
	t.Parallel()
	if !reflect.DeepEqual(schemas.RegimeKeys, RegimeKeys()) {
		t.Fatalf("schemas.RegimeKeys = %v, rules = %v", schemas.RegimeKeys, RegimeKeys())
	}
	enum := strings.Join(RegimeKeys(), ",")
	for _, typ := range []reflect.Type{reflect.TypeOf(schemas.ConstitutionScenario{}), reflect.TypeOf(schemas.ConstitutionOutcome{}),
		reflect.TypeOf(schemas.ConstitutionArtifact{}), reflect.TypeOf(schemas.ConstitutionRegimeCount{}),
		reflect.TypeOf(schemas.ConstitutionPreset{}), reflect.TypeOf(listArtifactsRequest{})} {
		f, ok := typ.FieldByName("Regime")
		if !ok {
			f, _ = typ.FieldByName("Key")
		}
		if f.Tag.Get("enum") != enum {
			t.Errorf("%s.%s enum = %q, want %q", typ.Name(), f.Name, f.Tag.Get("enum"), enum)
		}
	}
	f, _ := reflect.TypeOf(schemas.ConstitutionRegime{}).FieldByName("Key")
	if f.Tag.Get("enum") != enum {
		t.Errorf("ConstitutionRegime.Key enum = %q", f.Tag.Get("enum"))
	}
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
