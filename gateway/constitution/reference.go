package constitution

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/schemas"
)

var sliderText = [8][2]string{
	{"Social floor", "Guaranteed minimum of income, health and education below which nobody falls."},
	{"Rule of law", "How far the same written rules bind everyone, rulers included, and are enforced by independent courts."},
	{"Rotation", "How regularly and peacefully power changes hands (term limits, contested elections)."},
	{"Transparency", "How much of the state's decisions, budgets and interests is public."},
	{"Multiple status ladders", "How many independent ways to earn status exist besides political power (business, science, art, community)."},
	{"Skin in the game", "How much decision-makers personally bear the consequences of their decisions."},
	{"Polycentricity", "How many self-governing centres (regions, cities, communities) decide for themselves."},
	{"Positive-sum economy", "How far wealth is created by exchange and innovation rather than captured from others."},
}

var metricText = map[string]string{
	"eliteFear":     "How much the elite fears losing power, wealth or freedom (lower is calmer).",
	"intraConflict": "Intensity of conflict inside society (lower is better).",
	"resentment":    "Resentment of the governed towards the system (lower is better).",
	"innovation":    "Room for new ideas, firms and institutions (higher is better).",
	"stability":     "Ability to absorb shocks without breakdown (higher is better).",
	"legitimacy":    "How far people accept the system as rightful (higher is better).",
}

func sliderSpecDoc() schemas.ConstitutionSlidersSpec {
	out := make([]schemas.ConstitutionSliderSpec, len(schemas.SliderKeys))
	for i, k := range schemas.SliderKeys {
		p := map[string]int{}
		for m, mk := range schemas.MetricKeys {
			p[mk] = pushes[i][m]
		}
		out[i] = schemas.ConstitutionSliderSpec{Key: k, Label: sliderText[i][0], Description: sliderText[i][1], Min: 0, Max: 100, Pushes: p}
	}
	metrics := make([]schemas.ConstitutionMetricSpec, len(schemas.MetricKeys))
	for m, k := range schemas.MetricKeys {
		dir := "lower"
		if higherIsBetter[m] {
			dir = "higher"
		}
		metrics[m] = schemas.ConstitutionMetricSpec{Key: k, Description: metricText[k], Base: metricBase[m], Better: dir, Min: 0, Max: 100}
	}
	return schemas.ConstitutionSlidersSpec{
		Sliders: out,
		Metrics: metrics,
		Rule: "metric = clamp(round(base + sum over sliders of pushes[metric] * slider / 100), 0, 100); " +
			"rounding is half up; base is the metric's value with every slider at 0",
	}
}

func regimesDoc() schemas.ConstitutionRegimes {
	return schemas.ConstitutionRegimes{
		Regimes: regimes,
		Rule:    "the rules are tried in order and the first one whose conditions all hold names the regime; hybrid-regime matches when none does",
	}
}

// preset is a named slider setting.
type preset = schemas.ConstitutionPreset

func mkPreset(id, title, desc string, v [8]int) preset {
	s := schemas.SlidersFrom(v)
	o := Evaluate(s)
	return preset{ID: id, Title: title, Description: desc, Sliders: s, Regime: o.Regime, Metrics: o.Metrics}
}

var presets = []preset{
	mkPreset("balanced", "Balanced republic", "Every slider in the middle: a starting point.", [8]int{50, 50, 50, 50, 50, 50, 50, 50}),
	mkPreset("nordic", "Nordic welfare state", "High floor, strong rules, open government.", [8]int{85, 85, 75, 85, 70, 60, 55, 75}),
	mkPreset("swiss", "Confederation", "Cantons and communes decide most things themselves.", [8]int{65, 85, 70, 70, 70, 70, 90, 80}),
	mkPreset("city-state", "Technocratic city-state", "Efficient, rule-bound, centrally administered.", [8]int{55, 85, 40, 65, 60, 55, 15, 85}),
	mkPreset("strongman", "Strongman rule", "One leader, no rotation, little visibility.", [8]int{30, 30, 10, 15, 25, 20, 15, 30}),
	mkPreset("rent-state", "Resource oligarchy", "Wealth captured from resources by a closed elite.", [8]int{40, 35, 35, 40, 25, 15, 20, 20}),
	mkPreset("collapse", "State collapse", "Neither rules nor a floor.", [8]int{10, 10, 30, 20, 20, 20, 40, 10}),
}

// country is a curated, illustrative preset named after a country. The
// values are stylised teaching examples, not an assessment of any state.
type country = schemas.ConstitutionCountry

const countryNote = "Illustrative teaching values chosen for the tool, not a rating of the country."

func mkCountry(code, name, desc string, v [8]int) country {
	p := mkPreset(strings.ToLower(code), name, desc, v)
	return country{Code: code, Name: name, ConstitutionPreset: p, Note: countryNote}
}

var countries = []country{
	mkCountry("CH", "Switzerland", "Direct democracy and strong cantons.", [8]int{65, 90, 75, 75, 75, 70, 90, 85}),
	mkCountry("DK", "Denmark", "High social floor and open government.", [8]int{90, 90, 75, 90, 70, 60, 50, 80}),
	mkCountry("EE", "Estonia", "Digital, transparent administration.", [8]int{60, 80, 70, 90, 65, 60, 45, 80}),
	mkCountry("DE", "Germany", "Federal states under a strong constitution.", [8]int{80, 85, 70, 70, 70, 55, 70, 75}),
	mkCountry("JP", "Japan", "Stable, rule-bound, centrally coordinated.", [8]int{70, 80, 55, 60, 55, 45, 40, 75}),
	mkCountry("SG", "Singapore", "Compact, efficient, centrally administered.", [8]int{60, 85, 45, 65, 60, 55, 10, 90}),
	mkCountry("US", "United States", "Federal, competitive, with a modest floor.", [8]int{45, 75, 70, 70, 85, 50, 80, 80}),
	mkCountry("KZ", "Kazakhstan", "A reforming presidential system.", [8]int{50, 50, 40, 45, 50, 40, 30, 55}),
}

// template is a prompt template for the AI advisor: the goal it optimises
// when the request names none, and the instruction given to a model.
type template = schemas.ConstitutionAITemplate

var templates = []template{
	{ID: "balanced", Title: "Balanced improvement", Goal: "", Instruction: "Improve the scenario overall: raise innovation, stability and legitimacy and lower elite fear, conflict and resentment."},
	{ID: "stability-first", Title: "Stability first", Goal: "stability", Instruction: "Make the system as stable as possible."},
	{ID: "innovation-first", Title: "Innovation first", Goal: "innovation", Instruction: "Make the system as innovative as possible."},
	{ID: "legitimacy-first", Title: "Legitimacy first", Goal: "legitimacy", Instruction: "Make the system as legitimate in the eyes of its people as possible."},
	{ID: "calm-elites", Title: "Calm the elites", Goal: "eliteFear", Instruction: "Lower the elite's fear so that a peaceful transition becomes possible."},
	{ID: "reduce-conflict", Title: "Reduce conflict", Goal: "intraConflict", Instruction: "Lower the intensity of conflict inside society."},
}

func templateByID(id string) (template, bool) {
	for _, t := range templates {
		if t.ID == id {
			return t, true
		}
	}
	return template{}, false
}

func presetsDoc() schemas.ConstitutionPresets {
	return schemas.ConstitutionPresets{Presets: presets, AITemplates: templates}
}

func countriesDoc() schemas.ConstitutionCountries {
	return schemas.ConstitutionCountries{Countries: countries}
}

// cachedRequest is the request of a public reference read.
type cachedRequest struct {
	IfNoneMatch string `header:"If-None-Match" json:"-" description:"the ETag of a copy held; a match answers 304"`
}

// cachedJSON serves a fixed document with Cache-Control: public,
// max-age=3600 and a strong ETag (SHA-256 of the body), answering 304 to a
// matching If-None-Match.
func cachedJSON(doc any) func(*fiber.Ctx, *cachedRequest) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // rules read "ruleOfLaw < 20", not "\u003c"
	if err := enc.Encode(doc); err != nil {
		panic("constitution: encode reference data: " + err.Error())
	}
	body := bytes.TrimSpace(buf.Bytes())
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	return func(c *fiber.Ctx, req *cachedRequest) error {
		c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
		c.Set(fiber.HeaderETag, etag)
		if etagMatches(req.IfNoneMatch, etag) {
			return c.SendStatus(http.StatusNotModified)
		}
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
		return c.Send(body)
	}
}

// etagMatches implements If-None-Match's weak comparison: "*" or any listed
// tag equal to etag, with or without W/.
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}
