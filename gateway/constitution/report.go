package constitution

import (
	"time"

	"github.com/fintech/platform/gateway/constitution/pdfreport"
	"github.com/fintech/platform/schemas"
)

var metricLabel = map[string]string{
	"eliteFear": "Elite fear", "intraConflict": "Internal conflict", "resentment": "Resentment",
	"innovation": "Innovation", "stability": "Stability", "legitimacy": "Legitimacy",
}

func regimeByKey(key string) Regime {
	for _, r := range regimes {
		if r.Key == key {
			return r
		}
	}
	return regimes[len(regimes)-1]
}

// report puts a scenario in the words its PDF report prints: the regime's
// label, description and rule, and each slider and metric labelled.
func report(title string, s schemas.Sliders, regime string, m schemas.Metrics, tags []string, createdAt time.Time) pdfreport.Scenario {
	reg := regimeByKey(regime)
	out := pdfreport.Scenario{Title: title, Tags: tags, CreatedAt: createdAt,
		Regime: pdfreport.Regime{Label: reg.Label, Description: reg.Description, Rule: reg.Rule}}
	sv := s.Values()
	for i, k := range schemas.SliderKeys {
		out.Sliders = append(out.Sliders, pdfreport.Bar{Label: sliderText[i][0], Key: k, Value: sv[i]})
	}
	mv := m.Values()
	for i, k := range schemas.MetricKeys {
		out.Metrics = append(out.Metrics, pdfreport.Metric{Bar: pdfreport.Bar{Label: metricLabel[k], Key: k, Value: mv[i]},
			HigherIsBetter: higherIsBetter[i]})
	}
	return out
}
