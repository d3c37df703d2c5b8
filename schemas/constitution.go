package schemas

// Constitution and planet event types, emitted to events.constitution keyed
// by the acting user's id.
const (
	TypeScenarioCreated = "constitution.scenario_created"
	TypeArtifactCreated = "planet.artifact_created"
)

var constitutionVersions = map[string]int{TypeScenarioCreated: 1, TypeArtifactCreated: 1}

// SliderKeys are the eight scenario sliders, in the spec's order.
var SliderKeys = []string{"floor", "ruleOfLaw", "rotation", "transparency", "multiStatus", "skinInGame", "polycentricity", "positiveSum"}

// MetricKeys are the six computed metrics, in the spec's order.
var MetricKeys = []string{"eliteFear", "intraConflict", "resentment", "innovation", "stability", "legitimacy"}

// Sliders are the eight scenario sliders, each an integer 0..100.
type Sliders struct {
	Floor          int `json:"floor"`
	RuleOfLaw      int `json:"ruleOfLaw"`
	Rotation       int `json:"rotation"`
	Transparency   int `json:"transparency"`
	MultiStatus    int `json:"multiStatus"`
	SkinInGame     int `json:"skinInGame"`
	Polycentricity int `json:"polycentricity"`
	PositiveSum    int `json:"positiveSum"`
}

// Values returns the sliders in SliderKeys order.
func (s Sliders) Values() [8]int {
	return [8]int{s.Floor, s.RuleOfLaw, s.Rotation, s.Transparency, s.MultiStatus, s.SkinInGame, s.Polycentricity, s.PositiveSum}
}

// SlidersFrom builds sliders from values in SliderKeys order.
func SlidersFrom(v [8]int) Sliders {
	return Sliders{Floor: v[0], RuleOfLaw: v[1], Rotation: v[2], Transparency: v[3], MultiStatus: v[4],
		SkinInGame: v[5], Polycentricity: v[6], PositiveSum: v[7]}
}

// Metrics are the six computed metrics, each an integer 0..100.
type Metrics struct {
	EliteFear     int `json:"eliteFear"`
	IntraConflict int `json:"intraConflict"`
	Resentment    int `json:"resentment"`
	Innovation    int `json:"innovation"`
	Stability     int `json:"stability"`
	Legitimacy    int `json:"legitimacy"`
}

// Values returns the metrics in MetricKeys order.
func (m Metrics) Values() [6]int {
	return [6]int{m.EliteFear, m.IntraConflict, m.Resentment, m.Innovation, m.Stability, m.Legitimacy}
}

// MetricsFrom builds metrics from values in MetricKeys order.
func MetricsFrom(v [6]int) Metrics {
	return Metrics{EliteFear: v[0], IntraConflict: v[1], Resentment: v[2], Innovation: v[3], Stability: v[4], Legitimacy: v[5]}
}

// ScenarioCreated is emitted when a user saves a constitution scenario.
type ScenarioCreated struct {
	ScenarioID string  `json:"scenarioId"`
	UserID     string  `json:"userId"`
	Title      string  `json:"title"`
	Sliders    Sliders `json:"sliders"`
	Regime     string  `json:"regime"`
	Metrics    Metrics `json:"metrics"`
}

// ArtifactCreated is emitted when a scenario is published to the planet
// catalog.
type ArtifactCreated struct {
	ArtifactID string  `json:"artifactId"`
	UserID     string  `json:"userId"`
	ScenarioID string  `json:"scenarioId,omitempty"`
	Title      string  `json:"title"`
	Sliders    Sliders `json:"sliders"`
	Regime     string  `json:"regime"`
}
