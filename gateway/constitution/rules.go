package constitution

import (
	"fmt"
	"strings"

	"github.com/fintech/platform/schemas"
)

// The model: every metric is a clamped linear function of the sliders, and
// the regime is the first rule of an ordered list that the sliders satisfy.
// Both are pure integer arithmetic, so the same sliders always give the same
// answer on every machine; GET public/sliders-spec and public/regimes publish
// the exact numbers below.

// metricBase is the value of each metric (MetricKeys order) when every
// slider is 0.
var metricBase = [6]int{50, 60, 65, 25, 40, 20}

// pushes[i][m] is how many points metric m moves when slider i goes from 0
// to 100 (SliderKeys × MetricKeys order).
var pushes = [8][6]int{
	// eliteFear, intraConflict, resentment, innovation, stability, legitimacy
	{5, -10, -30, -5, 15, 15},   // floor
	{-25, -15, -10, 10, 20, 15}, // ruleOfLaw
	{-15, -10, -10, 5, -5, 15},  // rotation
	{15, -5, -15, 5, 0, 20},     // transparency
	{-10, -10, -20, 15, 5, 0},   // multiStatus
	{10, 0, -10, 5, 5, 15},      // skinInGame
	{-10, 10, -5, 20, -5, 5},    // polycentricity
	{-10, -20, -10, 20, 10, 5},  // positiveSum
}

// higherIsBetter marks the metrics a society wants high (the others it wants
// low), MetricKeys order.
var higherIsBetter = [6]bool{false, false, false, true, true, true}

// ComputeMetrics applies the documented rule: metric = clamp(round(base +
// Σ pushes[slider][metric] × slider / 100), 0, 100), rounding halves up.
func ComputeMetrics(s schemas.Sliders) schemas.Metrics {
	v := s.Values()
	var out [6]int
	for m := range out {
		num := metricBase[m] * 100
		for i, x := range v {
			num += pushes[i][m] * x
		}
		out[m] = clamp(floorDiv(num+50, 100), 0, 100)
	}
	return schemas.MetricsFrom(out)
}

func floorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func clamp(x, lo, hi int) int {
	return max(lo, min(hi, x))
}

// Regime is one regime label with the rule that selects it.
type Regime = schemas.ConstitutionRegime

// matches reports whether the sliders satisfy every condition of r.
func matches(r Regime, s schemas.Sliders) bool {
	v := s.Values()
	for _, c := range r.Conditions {
		x := v[sliderIndex(c.Slider)]
		if (c.Op == "<" && x >= c.Value) || (c.Op == ">=" && x < c.Value) {
			return false
		}
	}
	return true
}

// Condition is one "slider op value" test of a regime rule.
type Condition = schemas.ConstitutionCondition

func cond(slider, op string, value int) Condition {
	return Condition{Slider: slider, Op: op, Value: value}
}

// regimes are tried in order; the first whose conditions all hold wins, and
// the last one (no conditions) always matches.
var regimes = withRules([]Regime{
	{Key: "failed-state", Label: "Failed state", Description: "No enforceable rules and no social floor: power is whatever force can hold.",
		Conditions: []Condition{cond("ruleOfLaw", "<", 20), cond("floor", "<", 20)}},
	{Key: "autocracy", Label: "Autocracy", Description: "Power does not rotate and is exercised out of sight.",
		Conditions: []Condition{cond("rotation", "<", 25), cond("transparency", "<", 35)}},
	{Key: "oligarchy", Label: "Oligarchy", Description: "A narrow elite rotates among itself and is insulated from the consequences of its decisions.",
		Conditions: []Condition{cond("rotation", "<", 50), cond("skinInGame", "<", 35)}},
	{Key: "technocracy", Label: "Technocracy", Description: "Strong, transparent rules administered from one centre of expertise.",
		Conditions: []Condition{cond("ruleOfLaw", ">=", 70), cond("transparency", ">=", 60), cond("polycentricity", "<", 40)}},
	{Key: "federal-republic", Label: "Federal republic", Description: "Many self-governing centres under a shared rule of law.",
		Conditions: []Condition{cond("polycentricity", ">=", 65), cond("ruleOfLaw", ">=", 50)}},
	{Key: "social-democracy", Label: "Social democracy", Description: "Rotating, transparent government with a high social floor.",
		Conditions: []Condition{cond("floor", ">=", 65), cond("rotation", ">=", 50), cond("transparency", ">=", 50)}},
	{Key: "liberal-democracy", Label: "Liberal democracy", Description: "Power rotates under the rule of law.",
		Conditions: []Condition{cond("rotation", ">=", 50), cond("ruleOfLaw", ">=", 50)}},
	{Key: "hybrid-regime", Label: "Hybrid regime", Description: "A mix that fits none of the rules above.", Conditions: []Condition{}},
})

// withRules numbers the regimes and writes each one's rule as text; a
// condition on an unknown slider or with an unknown operator is a
// programming error.
func withRules(regimes []Regime) []Regime {
	for n := range regimes {
		r := &regimes[n]
		r.Order = n + 1
		var parts []string
		for _, c := range r.Conditions {
			if sliderIndex(c.Slider) < 0 || (c.Op != "<" && c.Op != ">=") {
				panic("constitution: bad regime condition " + c.Slider + c.Op)
			}
			parts = append(parts, fmt.Sprintf("%s %s %d", c.Slider, c.Op, c.Value))
		}
		if len(parts) == 0 {
			r.Rule = "otherwise (no earlier rule matched)"
		} else {
			r.Rule = strings.Join(parts, " and ") + fmt.Sprintf(" (rule %d; the first matching rule wins)", r.Order)
		}
	}
	return regimes
}

// ClassifyRegime returns the key of the first regime whose rule the sliders
// satisfy.
func ClassifyRegime(s schemas.Sliders) string {
	for _, r := range regimes {
		if matches(r, s) {
			return r.Key
		}
	}
	return regimes[len(regimes)-1].Key
}

// RegimeKeys lists every regime key in rule order.
func RegimeKeys() []string {
	out := make([]string, len(regimes))
	for i, r := range regimes {
		out[i] = r.Key
	}
	return out
}

// Outcome is the regime and metrics computed from sliders.
type Outcome = schemas.ConstitutionOutcome

// Evaluate computes the regime and metrics of sliders.
func Evaluate(s schemas.Sliders) Outcome {
	return Outcome{Regime: ClassifyRegime(s), Metrics: ComputeMetrics(s)}
}

// metricIndex returns the index of a metric key, or -1.
func metricIndex(key string) int {
	for i, k := range schemas.MetricKeys {
		if k == key {
			return i
		}
	}
	return -1
}

// sliderIndex returns the index of a slider key, or -1.
func sliderIndex(key string) int {
	for i, k := range schemas.SliderKeys {
		if k == key {
			return i
		}
	}
	return -1
}
