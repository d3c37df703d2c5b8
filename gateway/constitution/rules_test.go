package constitution

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/fintech/platform/schemas"
)

func all(v int) schemas.Sliders { return schemas.SlidersFrom([8]int{v, v, v, v, v, v, v, v}) }

// with returns s with the named sliders changed.
func with(s schemas.Sliders, kv map[string]int) schemas.Sliders {
	v := s.Values()
	for k, x := range kv {
		v[sliderIndex(k)] = x
	}
	return schemas.SlidersFrom(v)
}

func TestClassifyRegimeBoundaries(t *testing.T) {
	t.Parallel()
	mid := all(50)
	tests := []struct {
		name    string
		sliders schemas.Sliders
		want    string
	}{
		{"all zero", all(0), "failed-state"},
		{"all hundred", all(100), "federal-republic"},
		{"all fifty", mid, "liberal-democracy"},
		{"failed: ruleOfLaw 19 floor 19", with(mid, map[string]int{"ruleOfLaw": 19, "floor": 19}), "failed-state"},
		{"not failed: ruleOfLaw 20", with(mid, map[string]int{"ruleOfLaw": 20, "floor": 19}), "hybrid-regime"},
		{"not failed: floor 20", with(mid, map[string]int{"ruleOfLaw": 19, "floor": 20}), "hybrid-regime"},
		{"autocracy: rotation 24 transparency 34", with(mid, map[string]int{"rotation": 24, "transparency": 34}), "autocracy"},
		{"rotation 25 is not autocracy but oligarchy when skin low", with(mid, map[string]int{"rotation": 25, "transparency": 34, "skinInGame": 34}), "oligarchy"},
		{"transparency 35 is not autocracy", with(mid, map[string]int{"rotation": 24, "transparency": 35}), "hybrid-regime"},
		{"oligarchy: rotation 49 skin 34", with(mid, map[string]int{"rotation": 49, "skinInGame": 34}), "oligarchy"},
		{"skin 35 is not oligarchy", with(mid, map[string]int{"rotation": 49, "skinInGame": 35}), "hybrid-regime"},
		{"rotation 50 with skin 34 is a democracy", with(mid, map[string]int{"rotation": 50, "skinInGame": 34}), "liberal-democracy"},
		{"technocracy at its thresholds", with(mid, map[string]int{"ruleOfLaw": 70, "transparency": 60, "polycentricity": 39}), "technocracy"},
		{"polycentricity 40 is not technocracy", with(mid, map[string]int{"ruleOfLaw": 70, "transparency": 60, "polycentricity": 40}), "liberal-democracy"},
		{"ruleOfLaw 69 is not technocracy", with(mid, map[string]int{"ruleOfLaw": 69, "transparency": 60, "polycentricity": 39}), "liberal-democracy"},
		{"transparency 59 is not technocracy", with(mid, map[string]int{"ruleOfLaw": 70, "transparency": 59, "polycentricity": 39}), "liberal-democracy"},
		{"federal at its thresholds", with(mid, map[string]int{"polycentricity": 65, "ruleOfLaw": 50}), "federal-republic"},
		{"polycentricity 64 is not federal", with(mid, map[string]int{"polycentricity": 64}), "liberal-democracy"},
		{"federal needs ruleOfLaw 50", with(mid, map[string]int{"polycentricity": 65, "ruleOfLaw": 49}), "hybrid-regime"},
		{"social democracy at its thresholds", with(mid, map[string]int{"floor": 65, "rotation": 50, "transparency": 50}), "social-democracy"},
		{"floor 64 is not social democracy", with(mid, map[string]int{"floor": 64}), "liberal-democracy"},
		{"social democracy needs transparency 50", with(mid, map[string]int{"floor": 65, "transparency": 49}), "liberal-democracy"},
		{"liberal needs rotation 50", with(mid, map[string]int{"rotation": 49}), "hybrid-regime"},
		{"liberal needs ruleOfLaw 50", with(mid, map[string]int{"ruleOfLaw": 49}), "hybrid-regime"},
		{"earlier rule wins: failed over autocracy", with(all(0), map[string]int{}), "failed-state"},
		{"earlier rule wins: autocracy over oligarchy", with(mid, map[string]int{"rotation": 10, "transparency": 10, "skinInGame": 10}), "autocracy"},
		{"earlier rule wins: social democracy over liberal", with(mid, map[string]int{"floor": 100}), "social-democracy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ClassifyRegime(tt.sliders); got != tt.want {
				t.Fatalf("ClassifyRegime(%+v) = %s, want %s", tt.sliders, got, tt.want)
			}
		})
	}
}

func TestComputeMetrics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		sliders schemas.Sliders
		want    schemas.Metrics
	}{
		{"all zero is the base", all(0), schemas.MetricsFrom(metricBase)},
		// Sums of pushes: eliteFear -40, intraConflict -60, resentment -110,
		// innovation 75, stability 45, legitimacy 90.
		{"all hundred clamps", all(100), schemas.Metrics{EliteFear: 10, IntraConflict: 0, Resentment: 0, Innovation: 100, Stability: 85, Legitimacy: 100}},
		{"all fifty", all(50), schemas.Metrics{EliteFear: 30, IntraConflict: 30, Resentment: 10, Innovation: 63, Stability: 63, Legitimacy: 65}},
		// floor at 1: resentment 65 - 0.30 = 64.7 → 65; floor at 2: 64.4 → 64.
		{"rounding: resentment 64.7 → 65", with(all(0), map[string]int{"floor": 1}), schemas.Metrics{EliteFear: 50, IntraConflict: 60, Resentment: 65, Innovation: 25, Stability: 40, Legitimacy: 20}},
		{"rounding: resentment 64.4 → 64", with(all(0), map[string]int{"floor": 2}), schemas.Metrics{EliteFear: 50, IntraConflict: 60, Resentment: 64, Innovation: 25, Stability: 40, Legitimacy: 20}},
		// ruleOfLaw 2: eliteFear 50 - 0.5 = 49.5 → 50 (halves round up).
		{"rounding: half rounds up", with(all(0), map[string]int{"ruleOfLaw": 2}), schemas.Metrics{EliteFear: 50, IntraConflict: 60, Resentment: 65, Innovation: 25, Stability: 40, Legitimacy: 20}},
		{"rounding: 48.75 → 49", with(all(0), map[string]int{"ruleOfLaw": 5}), schemas.Metrics{EliteFear: 49, IntraConflict: 59, Resentment: 65, Innovation: 26, Stability: 41, Legitimacy: 21}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ComputeMetrics(tt.sliders); got != tt.want {
				t.Fatalf("ComputeMetrics(%+v) = %+v, want %+v", tt.sliders, got, tt.want)
			}
		})
	}
	// Each slider alone at 100 moves each metric by exactly its push.
	for i, k := range schemas.SliderKeys {
		got := ComputeMetrics(with(all(0), map[string]int{k: 100})).Values()
		for m := range got {
			if want := clamp(metricBase[m]+pushes[i][m], 0, 100); got[m] != want {
				t.Errorf("%s at 100: %s = %d, want %d", k, schemas.MetricKeys[m], got[m], want)
			}
		}
	}
}

func TestMetricsStayInRange(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		var v [8]int
		for i := range v {
			v[i] = r.IntN(101)
		}
		for _, x := range ComputeMetrics(schemas.SlidersFrom(v)).Values() {
			if x < 0 || x > 100 {
				t.Fatalf("metric out of range for %v: %d", v, x)
			}
		}
	}
}

func TestBuiltinAdvisor(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	goals := append([]string{""}, schemas.MetricKeys...)
	for n := range 400 {
		var v [8]int
		for i := range v {
			v[i] = r.IntN(101)
		}
		if n%10 == 0 {
			v = [8]int{100, 0, 100, 0, 100, 0, 100, 0}
		}
		s := schemas.SlidersFrom(v)
		goal := goals[n%len(goals)]
		adv := Builtin{}.Advise(context.Background(), AdviceRequest{Sliders: s, Goal: goal})
		if adv.Source != SourceBuiltin {
			t.Fatalf("source %q", adv.Source)
		}
		seen := map[string]bool{}
		for _, sg := range adv.Suggestions {
			i := sliderIndex(sg.Slider)
			if i < 0 || seen[sg.Slider] || sg.Delta == 0 || v[i]+sg.Delta < 0 || v[i]+sg.Delta > 100 || sg.Reason == "" {
				t.Fatalf("bad suggestion %+v for %v", sg, v)
			}
			seen[sg.Slider] = true
		}
		before := objective(ComputeMetrics(s), goal)
		after := objective(ComputeMetrics(apply(s, adv.Suggestions)), goal)
		if len(adv.Suggestions) > 0 && after <= before {
			t.Fatalf("suggestions %+v do not improve goal %q: %d → %d", adv.Suggestions, goal, before, after)
		}
		// Whenever one slider move improves the goal, there is a suggestion.
		if len(adv.Suggestions) == 0 {
			for i := range v {
				for _, d := range candidateDeltas(v[i], append(append([]int{}, moderateSteps...), largeSteps...)) {
					w := v
					w[i] += d
					if objective(ComputeMetrics(schemas.SlidersFrom(w)), goal) > before {
						t.Fatalf("no suggestion for %v goal %q though %s%+d improves it", v, goal, schemas.SliderKeys[i], d)
					}
				}
			}
		}
	}
	// Already optimal for legitimacy (clamped at 100): nothing to suggest.
	if adv := (Builtin{}).Advise(context.Background(), AdviceRequest{Sliders: all(100), Goal: "legitimacy"}); len(adv.Suggestions) != 0 {
		t.Fatalf("suggestions for an optimal scenario: %+v", adv.Suggestions)
	}
	// Deterministic.
	a := Builtin{}.Advise(context.Background(), AdviceRequest{Sliders: all(50)})
	b := Builtin{}.Advise(context.Background(), AdviceRequest{Sliders: all(50)})
	if len(a.Suggestions) == 0 || len(a.Suggestions) != len(b.Suggestions) || a.Suggestions[0] != b.Suggestions[0] {
		t.Fatalf("not deterministic: %+v vs %+v", a, b)
	}
}

func TestParseSliders(t *testing.T) {
	t.Parallel()
	ok := `{"floor":0,"ruleOfLaw":100,"rotation":50,"transparency":1,"multiStatus":99,"skinInGame":7,"polycentricity":8,"positiveSum":9}`
	tests := []struct {
		name  string
		json  string
		field string // "" = valid
	}{
		{"valid", ok, ""},
		{"missing", `{"floor":0}`, "sliders.ruleOfLaw"},
		{"over", `{"floor":101,"ruleOfLaw":1,"rotation":1,"transparency":1,"multiStatus":1,"skinInGame":1,"polycentricity":1,"positiveSum":1}`, "sliders.floor"},
		{"negative", `{"floor":-1,"ruleOfLaw":1,"rotation":1,"transparency":1,"multiStatus":1,"skinInGame":1,"polycentricity":1,"positiveSum":1}`, "sliders.floor"},
		{"fraction", `{"floor":1.5,"ruleOfLaw":1,"rotation":1,"transparency":1,"multiStatus":1,"skinInGame":1,"polycentricity":1,"positiveSum":1}`, "sliders.floor"},
		{"integral fraction", `{"floor":1.0,"ruleOfLaw":1,"rotation":1,"transparency":1,"multiStatus":1,"skinInGame":1,"polycentricity":1,"positiveSum":1}`, "sliders.floor"},
		{"string", `{"floor":"5","ruleOfLaw":1,"rotation":1,"transparency":1,"multiStatus":1,"skinInGame":1,"polycentricity":1,"positiveSum":1}`, "sliders.floor"},
		{"null", `{"floor":null,"ruleOfLaw":1,"rotation":1,"transparency":1,"multiStatus":1,"skinInGame":1,"polycentricity":1,"positiveSum":1}`, "sliders.floor"},
		{"unknown", `{"floor":1,"ruleOfLaw":1,"rotation":1,"transparency":1,"multiStatus":1,"skinInGame":1,"polycentricity":1,"positiveSum":1,"army":5}`, "sliders.army"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var in sliderInput
			if err := jsonUnmarshal(tt.json, &in); err != nil {
				t.Fatal(err)
			}
			var v validatorProbe
			parseSliders(&v.Validator, "sliders", in)
			fields := v.fields()
			if tt.field == "" {
				if len(fields) != 0 {
					t.Fatalf("unexpected problems %v", fields)
				}
				return
			}
			if fields[tt.field] == "" {
				t.Fatalf("want a problem on %s, got %v", tt.field, fields)
			}
		})
	}
}

func BenchmarkBuiltinAdvise(b *testing.B) {
	req := AdviceRequest{Sliders: schemas.SlidersFrom([8]int{40, 55, 35, 30, 45, 50, 20, 60})}
	for b.Loop() {
		Builtin{}.Advise(context.Background(), req)
	}
}
