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
	Floor          int `json:"floor" required:"true" minimum:"0" maximum:"100"`
	RuleOfLaw      int `json:"ruleOfLaw" required:"true" minimum:"0" maximum:"100"`
	Rotation       int `json:"rotation" required:"true" minimum:"0" maximum:"100"`
	Transparency   int `json:"transparency" required:"true" minimum:"0" maximum:"100"`
	MultiStatus    int `json:"multiStatus" required:"true" minimum:"0" maximum:"100"`
	SkinInGame     int `json:"skinInGame" required:"true" minimum:"0" maximum:"100"`
	Polycentricity int `json:"polycentricity" required:"true" minimum:"0" maximum:"100"`
	PositiveSum    int `json:"positiveSum" required:"true" minimum:"0" maximum:"100"`
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
	EliteFear     int `json:"eliteFear" required:"true" minimum:"0" maximum:"100"`
	IntraConflict int `json:"intraConflict" required:"true" minimum:"0" maximum:"100"`
	Resentment    int `json:"resentment" required:"true" minimum:"0" maximum:"100"`
	Innovation    int `json:"innovation" required:"true" minimum:"0" maximum:"100"`
	Stability     int `json:"stability" required:"true" minimum:"0" maximum:"100"`
	Legitimacy    int `json:"legitimacy" required:"true" minimum:"0" maximum:"100"`
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

// Limits of the constitution module's text and lists: a title is at most
// 200 characters (bind.MaxTitle), a comment 1..MaxCommentLen characters,
// tags at most MaxTags of 1..MaxTagLen characters each.
const (
	MaxTags       = 20
	MaxTagLen     = 50
	MaxCommentLen = 2000
)

// RegimeKeys are the regime keys in rule order; the regime fields below
// enumerate the same list (gateway/constitution checks they agree).
var RegimeKeys = []string{"failed-state", "autocracy", "oligarchy", "technocracy", "federal-republic",
	"social-democracy", "liberal-democracy", "hybrid-regime"}

// Sources of AI advice, reported in every AI answer.
const (
	AISourceBuiltin  = "builtin"          // the built-in rule-based advisor (no AI endpoint configured)
	AISourceModel    = "model"            // the configured OpenAI-compatible endpoint
	AISourceFallback = "builtin-fallback" // the endpoint failed; the built-in advisor answered instead
)

// ConstitutionScenario is a saved scenario: the sliders as sent, and the
// regime and metrics the server computed from them.
type ConstitutionScenario struct {
	ID        string   `json:"id" required:"true" format:"ksuid"`
	Title     string   `json:"title" required:"true"`
	Sliders   Sliders  `json:"sliders" required:"true"`
	Regime    string   `json:"regime" required:"true" enum:"failed-state,autocracy,oligarchy,technocracy,federal-republic,social-democracy,liberal-democracy,hybrid-regime"`
	Metrics   Metrics  `json:"metrics" required:"true"`
	Tags      []string `json:"tags" required:"true" nullable:"false"`
	CreatedAt string   `json:"createdAt" required:"true" format:"date-time"`
}

// ConstitutionOutcome is the regime and metrics computed from sliders.
type ConstitutionOutcome struct {
	Regime  string  `json:"regime" required:"true" enum:"failed-state,autocracy,oligarchy,technocracy,federal-republic,social-democracy,liberal-democracy,hybrid-regime"`
	Metrics Metrics `json:"metrics" required:"true"`
}

// ConstitutionSuggestion is one proposed slider change.
type ConstitutionSuggestion struct {
	Slider string `json:"slider" required:"true" enum:"floor,ruleOfLaw,rotation,transparency,multiStatus,skinInGame,polycentricity,positiveSum"`
	Delta  int    `json:"delta" required:"true" minimum:"-100" maximum:"100" description:"non-zero; keeps the slider within 0..100"`
	Reason string `json:"reason" required:"true"`
}

// ConstitutionAdvice is the answer of ai-suggest (and the data of the
// stream's result event): the suggestions, the outcome before and after
// applying them, and the caller's AI usage this month.
type ConstitutionAdvice struct {
	Suggestions []ConstitutionSuggestion `json:"suggestions" required:"true" nullable:"false"`
	Predicted   ConstitutionOutcome      `json:"predicted" required:"true" description:"the outcome after applying every suggestion"`
	Current     ConstitutionOutcome      `json:"current" required:"true"`
	Goal        *string                  `json:"goal" required:"true" enum:"eliteFear,intraConflict,resentment,innovation,stability,legitimacy" description:"the metric improved: the request's goal, else the template's, else null (the overall score)"`
	TemplateID  *string                  `json:"templateId" required:"true"`
	Source      string                   `json:"source" required:"true" enum:"builtin,model,builtin-fallback"`
	// FallbackReason says why the model's answer was not used; only with
	// source builtin-fallback.
	FallbackReason  string `json:"fallbackReason,omitempty" enum:"model_timeout,model_error,model_invalid_response,budget_exhausted"`
	AIRequestsUsed  int64  `json:"aiRequestsUsed" required:"true"`
	AIRequestsLimit int64  `json:"aiRequestsLimit" required:"true"`
}

// ConstitutionAdviceProgress is the data of a progress event of
// ai-suggest-stream: stage accepted carries current, advising the source,
// predicted the number of suggestions.
type ConstitutionAdviceProgress struct {
	Stage       string               `json:"stage" required:"true" enum:"accepted,advising,predicted"`
	Step        int                  `json:"step" required:"true"`
	Of          int                  `json:"of" required:"true"`
	Current     *ConstitutionOutcome `json:"current,omitempty"`
	Source      string               `json:"source,omitempty" enum:"builtin,model"`
	Suggestions *int                 `json:"suggestions,omitempty"`
}

// ConstitutionPlan is the caller's AI plan and this calendar month's usage.
type ConstitutionPlan struct {
	Plan            string `json:"plan" required:"true"`
	AIRequestsUsed  int64  `json:"aiRequestsUsed" required:"true"`
	AIRequestsLimit int64  `json:"aiRequestsLimit" required:"true"`
	PeriodStart     string `json:"periodStart" required:"true" format:"date-time"`
	PeriodEnd       string `json:"periodEnd" required:"true" format:"date-time" description:"when the monthly counter starts again"`
	Advisor         string `json:"advisor" required:"true" enum:"builtin,model"`
}

// ConstitutionArtifact is a scenario published to the planet catalog.
type ConstitutionArtifact struct {
	ID           string   `json:"id" required:"true" format:"ksuid"`
	UserID       string   `json:"userId" required:"true" format:"ksuid"`
	ScenarioID   *string  `json:"scenarioId" required:"true" format:"ksuid" description:"the saved scenario it was published from, or null"`
	Title        string   `json:"title" required:"true"`
	Sliders      Sliders  `json:"sliders" required:"true"`
	Regime       string   `json:"regime" required:"true" enum:"failed-state,autocracy,oligarchy,technocracy,federal-republic,social-democracy,liberal-democracy,hybrid-regime"`
	Metrics      Metrics  `json:"metrics" required:"true"`
	Tags         []string `json:"tags" required:"true" nullable:"false"`
	Votes        int64    `json:"votes" required:"true"`
	CommentCount int64    `json:"commentCount" required:"true"`
	CreatedAt    string   `json:"createdAt" required:"true" format:"date-time"`
}

// ConstitutionSimilar is an artifact with its Euclidean distance (of the
// sliders) from the artifact asked about.
type ConstitutionSimilar struct {
	ConstitutionArtifact
	Distance float64 `json:"distance" required:"true" minimum:"0"`
}

// ConstitutionSimilarList is the answer of similar: at most 5 artifacts,
// nearest first, ties by id.
type ConstitutionSimilarList struct {
	Items []ConstitutionSimilar `json:"items" required:"true" nullable:"false"`
}

// ConstitutionRegimeCount is how many artifacts have one regime.
type ConstitutionRegimeCount struct {
	Regime string `json:"regime" required:"true" enum:"failed-state,autocracy,oligarchy,technocracy,federal-republic,social-democracy,liberal-democracy,hybrid-regime"`
	Count  int64  `json:"count" required:"true"`
}

// ConstitutionCatalogStats is the catalog's size, by regime.
type ConstitutionCatalogStats struct {
	TotalArtifacts int64                     `json:"totalArtifacts" required:"true"`
	ByRegime       []ConstitutionRegimeCount `json:"byRegime" required:"true" nullable:"false"`
}

// ConstitutionVote is an artifact's vote count and whether the caller voted.
type ConstitutionVote struct {
	ArtifactID string `json:"artifactId" required:"true" format:"ksuid"`
	Votes      int64  `json:"votes" required:"true"`
	Voted      bool   `json:"voted" required:"true"`
}

// ConstitutionComment is one comment on an artifact.
type ConstitutionComment struct {
	ID        string `json:"id" required:"true" format:"ksuid"`
	UserID    string `json:"userId" required:"true" format:"ksuid"`
	Text      string `json:"text" required:"true" minLength:"1" maxLength:"2000"`
	CreatedAt string `json:"createdAt" required:"true" format:"date-time"`
}

// ConstitutionSocial is an artifact's votes, whether the caller voted
// (false without a token) and a page of its comments, oldest first:
// NextCursor (the `cursor` of the next page, of /social or /comments) is set
// while more remain.
type ConstitutionSocial struct {
	Votes      int64                 `json:"votes" required:"true"`
	Voted      bool                  `json:"voted" required:"true"`
	Comments   []ConstitutionComment `json:"comments" required:"true" nullable:"false"`
	NextCursor *string               `json:"nextCursor" required:"true" description:"the cursor of the next page of comments; null when none remain"`
}

// The reference data of GET /api/constitution/public/*. Fields are in
// alphabetical order where the document was a JSON object with sorted keys,
// so the bytes (and the ETag) stay as they were.

// ConstitutionRegimes is GET public/regimes: the regimes in rule order.
type ConstitutionRegimes struct {
	Regimes []ConstitutionRegime `json:"regimes" required:"true"`
	Rule    string               `json:"rule" required:"true"`
}

// ConstitutionRegime is one regime label with the rule that selects it.
type ConstitutionRegime struct {
	Key         string `json:"key" required:"true" enum:"failed-state,autocracy,oligarchy,technocracy,federal-republic,social-democracy,liberal-democracy,hybrid-regime"`
	Label       string `json:"label" required:"true"`
	Description string `json:"description" required:"true"`
	Rule        string `json:"rule" required:"true"`
	Order       int    `json:"order" required:"true" minimum:"1"`
	// Conditions are the rule in machine-readable form: every condition must
	// hold. Empty for the fallback regime.
	Conditions []ConstitutionCondition `json:"conditions" required:"true" nullable:"false"`
}

// ConstitutionCondition is one "slider op value" test of a regime rule.
type ConstitutionCondition struct {
	Slider string `json:"slider" required:"true" enum:"floor,ruleOfLaw,rotation,transparency,multiStatus,skinInGame,polycentricity,positiveSum"`
	Op     string `json:"op" required:"true" enum:"<,>="`
	Value  int    `json:"value" required:"true" minimum:"0" maximum:"100"`
}

// ConstitutionPresets is GET public/presets: preset slider settings and the
// AI prompt templates.
type ConstitutionPresets struct {
	AITemplates []ConstitutionAITemplate `json:"aiTemplates" required:"true"`
	Presets     []ConstitutionPreset     `json:"presets" required:"true"`
}

// ConstitutionPreset is a named slider setting with its outcome.
type ConstitutionPreset struct {
	ID          string  `json:"id" required:"true"`
	Title       string  `json:"title" required:"true"`
	Description string  `json:"description" required:"true"`
	Sliders     Sliders `json:"sliders" required:"true"`
	Regime      string  `json:"regime" required:"true" enum:"failed-state,autocracy,oligarchy,technocracy,federal-republic,social-democracy,liberal-democracy,hybrid-regime"`
	Metrics     Metrics `json:"metrics" required:"true"`
}

// ConstitutionAITemplate is a prompt template of the AI advisor: the goal it
// optimises when the request names none ("" for the overall score) and the
// instruction given to a model.
type ConstitutionAITemplate struct {
	ID          string `json:"id" required:"true"`
	Title       string `json:"title" required:"true"`
	Goal        string `json:"goal" required:"true" enum:",eliteFear,intraConflict,resentment,innovation,stability,legitimacy"`
	Instruction string `json:"instruction" required:"true"`
}

// ConstitutionCountries is GET public/countries.
type ConstitutionCountries struct {
	Countries []ConstitutionCountry `json:"countries" required:"true"`
}

// ConstitutionCountry is a curated, illustrative preset named after a
// country. The values are stylised teaching examples, not an assessment of
// any state.
type ConstitutionCountry struct {
	Code string `json:"code" required:"true"`
	Name string `json:"name" required:"true"`
	ConstitutionPreset
	Note string `json:"note" required:"true"`
}

// ConstitutionSlidersSpec is GET public/sliders-spec: the eight sliders,
// the six metrics and the rule that computes the metrics.
type ConstitutionSlidersSpec struct {
	Metrics []ConstitutionMetricSpec `json:"metrics" required:"true"`
	Rule    string                   `json:"rule" required:"true"`
	Sliders []ConstitutionSliderSpec `json:"sliders" required:"true"`
}

// ConstitutionSliderSpec documents one slider: how many points it pushes
// each metric when it goes from 0 to 100.
type ConstitutionSliderSpec struct {
	Key         string         `json:"key" required:"true"`
	Label       string         `json:"label" required:"true"`
	Description string         `json:"description" required:"true"`
	Min         int            `json:"min" required:"true"`
	Max         int            `json:"max" required:"true"`
	Pushes      map[string]int `json:"pushes" required:"true"`
}

// ConstitutionMetricSpec documents one metric: its value with every slider
// at 0 and which direction is better.
type ConstitutionMetricSpec struct {
	Base        int    `json:"base" required:"true"`
	Better      string `json:"better" required:"true" enum:"lower,higher"`
	Description string `json:"description" required:"true"`
	Key         string `json:"key" required:"true"`
	Max         int    `json:"max" required:"true"`
	Min         int    `json:"min" required:"true"`
}
