package constitution

import (
	"context"
	"fmt"

	"github.com/fintech/platform/schemas"
)

// Advice sources, reported in every AI answer.
const (
	SourceBuiltin  = schemas.AISourceBuiltin
	SourceModel    = schemas.AISourceModel
	SourceFallback = schemas.AISourceFallback
)

// Suggestion is one proposed slider change.
type Suggestion = schemas.ConstitutionSuggestion

// AdviceRequest is what an advisor is asked.
type AdviceRequest struct {
	Sliders schemas.Sliders
	// Goal is a metric key to improve, or "" for the overall score (the
	// sum of the metrics where higher is better minus the others).
	Goal     string
	Template template
}

// Advice is an advisor's answer.
type Advice struct {
	Suggestions []Suggestion
	Source      string
	// FallbackReason says why the model's answer was not used
	// (model_timeout, model_error, model_invalid_response, or
	// budget_exhausted: the day's global AI budget is past its level);
	// empty otherwise.
	FallbackReason string
}

// Advisor proposes slider changes.
type Advisor interface {
	Advise(ctx context.Context, req AdviceRequest) Advice
}

// Builtin is the deterministic rule-based advisor. It needs no network.
type Builtin struct{}

var _ Advisor = Builtin{}

// maxSuggestions bounds the built-in advisor's answer.
const maxSuggestions = 3

// objective scores metrics for a goal: the goal metric (negated when lower
// is better), or the overall score.
func objective(m schemas.Metrics, goal string) int {
	v := m.Values()
	if i := metricIndex(goal); i >= 0 {
		if higherIsBetter[i] {
			return v[i]
		}
		return -v[i]
	}
	total := 0
	for i, x := range v {
		if higherIsBetter[i] {
			total += x
		} else {
			total -= x
		}
	}
	return total
}

// Moves the built-in advisor tries, in order: moderate steps first; larger
// moves only when no moderate step of any slider helps.
var (
	moderateSteps = []int{10, -10, 20, -20}
	largeSteps    = []int{40, -40, 100, -100} // ±100 = all the way to the end
)

// candidateDeltas lists the moves of steps for a slider at x, each kept
// within 0..100 (a step past an end becomes the move to that end).
func candidateDeltas(x int, steps []int) []int {
	var out []int
	seen := map[int]bool{0: true}
	for _, d := range steps {
		d = clamp(x+d, 0, 100) - x
		if seen[d] {
			continue
		}
		seen[d] = true
		out = append(out, d)
	}
	return out
}

// Advise improves the goal greedily: up to three times it picks the single
// slider move (each slider at most once) that raises the objective most —
// among steps of ±10 and ±20, or when none helps among ±40 and moves to
// either end — preferring earlier sliders and smaller moves on ties, and
// stops when no move helps. It returns at least one suggestion whenever moving one slider
// would improve the goal.
func (Builtin) Advise(_ context.Context, req AdviceRequest) Advice {
	goal := req.Goal
	if goal == "" {
		goal = req.Template.Goal
	}
	cur := req.Sliders.Values()
	used := [8]bool{}
	out := []Suggestion{}
	for len(out) < maxSuggestions {
		before := ComputeMetrics(schemas.SlidersFrom(cur))
		best, bestI, bestD := objective(before, goal), -1, 0
		for _, steps := range [][]int{moderateSteps, largeSteps} {
			for i := range cur {
				if used[i] {
					continue
				}
				for _, d := range candidateDeltas(cur[i], steps) {
					next := cur
					next[i] += d
					if o := objective(ComputeMetrics(schemas.SlidersFrom(next)), goal); o > best {
						best, bestI, bestD = o, i, d
					}
				}
			}
			if bestI >= 0 {
				break
			}
		}
		if bestI < 0 {
			break
		}
		cur[bestI] += bestD
		used[bestI] = true
		after := ComputeMetrics(schemas.SlidersFrom(cur))
		out = append(out, Suggestion{Slider: schemas.SliderKeys[bestI], Delta: bestD, Reason: reason(bestI, bestD, before, after, goal)})
	}
	return Advice{Suggestions: out, Source: SourceBuiltin}
}

// reason explains a move by the metric it changes most (the goal metric
// when there is one).
func reason(slider, delta int, before, after schemas.Metrics, goal string) string {
	verb := "Raise"
	if delta < 0 {
		verb = "Lower"
	}
	b, a := before.Values(), after.Values()
	m := metricIndex(goal)
	if m < 0 {
		bestGain := -1
		for i := range b {
			gain := a[i] - b[i]
			if !higherIsBetter[i] {
				gain = -gain
			}
			if gain > bestGain {
				bestGain, m = gain, i
			}
		}
	}
	return fmt.Sprintf("%s %s by %d: %s goes from %d to %d.", verb, sliderText[slider][0], abs(delta),
		schemas.MetricKeys[m], b[m], a[m])
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// apply returns the sliders after the suggestions (each already validated
// to stay within 0..100).
func apply(s schemas.Sliders, sug []Suggestion) schemas.Sliders {
	v := s.Values()
	for _, x := range sug {
		if i := sliderIndex(x.Slider); i >= 0 {
			v[i] = clamp(v[i]+x.Delta, 0, 100)
		}
	}
	return schemas.SlidersFrom(v)
}
