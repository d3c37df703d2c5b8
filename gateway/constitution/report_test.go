package constitution

import (
	"testing"
	"time"

	"github.com/fintech/platform/schemas"
)

// TestReport checks what the PDF prints of a scenario: the regime its
// sliders classify as, with its rule, and every slider and metric labelled,
// in key order, with its value.
func TestReport(t *testing.T) {
	t.Parallel()
	s := schemas.Sliders{Floor: 85, RuleOfLaw: 85, Rotation: 75, Transparency: 85, MultiStatus: 70, SkinInGame: 60, Polycentricity: 55, PositiveSum: 75}
	o := Evaluate(s)
	r := report("t", s, o.Regime, o.Metrics, []string{"x"}, time.Unix(0, 0))
	reg := regimeByKey(o.Regime)
	if reg.Key != o.Regime || r.Regime.Label != reg.Label || r.Regime.Rule == "" || r.Regime.Rule != reg.Rule || r.Regime.Description != reg.Description {
		t.Fatalf("regime %+v, want %+v", r.Regime, reg)
	}
	if len(r.Sliders) != len(schemas.SliderKeys) || len(r.Metrics) != len(schemas.MetricKeys) {
		t.Fatalf("%d sliders, %d metrics", len(r.Sliders), len(r.Metrics))
	}
	sv, mv := s.Values(), o.Metrics.Values()
	for i, b := range r.Sliders {
		if b.Key != schemas.SliderKeys[i] || b.Label == "" || b.Value != sv[i] {
			t.Errorf("slider %d: %+v", i, b)
		}
	}
	for i, m := range r.Metrics {
		if m.Key != schemas.MetricKeys[i] || m.Label == "" || m.Value != mv[i] || m.HigherIsBetter != higherIsBetter[i] {
			t.Errorf("metric %d: %+v", i, m)
		}
	}
}
