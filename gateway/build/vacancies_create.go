package build

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/swaggest/jsonschema-go"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/build"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/topics"
)

// Skill limits.
const (
	maxSkills   = 30
	maxSkillLen = 100
)

var currencyCode = regexp.MustCompile(`^[A-Z]{3}$`)

// errPlanLimit is the spec's 403 for an employer out of open-vacancy slots.
var errPlanLimit = apierr.New(http.StatusForbidden, schemas.CodePlanVacancyLimitReached,
	"your plan's open vacancy slots are exhausted; close a vacancy first")

func errProjectNotFound() *apierr.Error { return apierr.NotFound("no such project of yours") }

func errVacancyNotFound() *apierr.Error { return apierr.NotFound("no such vacancy") }

func errEmployerNotFound() *apierr.Error {
	return apierr.NotFound("no such employer with open vacancies")
}

// createVacancyRequest is the body of POST /vacancies.
type createVacancyRequest struct {
	ProjectID      string      `json:"projectId" required:"true" format:"ksuid" description:"one of the caller's projects"`
	Title          string      `json:"title" required:"true" maxLength:"200"`
	Description    string      `json:"description" required:"true" maxLength:"20000"`
	Salary         bind.Amount `json:"salary" required:"true"`
	SalaryCurrency string      `json:"salaryCurrency" required:"true" pattern:"^[A-Za-z]{3}$" description:"ISO 4217 code"`
	Skills         skillList   `json:"skills"`
	City           string      `json:"city" required:"true" maxLength:"200"`
	ExpiresAt      string      `json:"expiresAt" required:"true" format:"date-time" description:"RFC 3339, in the future"`
}

// skillList is the skills of a vacancy as sent, kept raw so that anything
// but an array of strings is a validation error naming the field.
type skillList struct{ json.RawMessage }

// PrepareJSONSchema describes the skills a vacancy may list.
func (skillList) PrepareJSONSchema(s *jsonschema.Schema) error {
	item := jsonschema.String.ToSchemaOrBool()
	item.TypeObject.WithMaxLength(maxSkillLen)
	s.WithType(jsonschema.Array.Type()).WithItems(*(&jsonschema.Items{}).WithSchemaOrBool(item)).WithMaxItems(maxSkills).
		WithDescription("at most 30 skills of at most 100 characters; repeats (ignoring case) are dropped")
	return nil
}

// list is the skills sent (none when left out or refused).
func (l skillList) list() []string {
	var skills []string
	if l.Present() {
		_ = json.Unmarshal(l.RawMessage, &skills)
	}
	return skills
}

// Present reports whether skills were sent.
func (l skillList) Present() bool {
	raw := strings.TrimSpace(string(l.RawMessage))
	return raw != "" && raw != "null"
}

// Invalid says why the skills are refused, "" when they are not.
func (l skillList) Invalid() string {
	var skills []string
	switch {
	case json.Unmarshal(l.RawMessage, &skills) != nil:
		return "must be an array of strings"
	case len(skills) > maxSkills:
		return "must have at most 30 entries"
	}
	for _, sk := range skills {
		if sk = strings.TrimSpace(sk); sk == "" || utf8.RuneCountInString(sk) > maxSkillLen {
			return "each must be non-blank text of at most 100 characters"
		}
	}
	return ""
}

// validate checks the request and returns the vacancy without ids. Skills
// are trimmed and de-duplicated case-insensitively, keeping the first
// spelling.
func (req createVacancyRequest) validate(now time.Time) (build.Vacancy, error) {
	var v bind.Validator
	d := build.Vacancy{
		ProjectID:      strings.TrimSpace(req.ProjectID),
		Title:          strings.TrimSpace(req.Title),
		Description:    strings.TrimSpace(req.Description),
		SalaryCurrency: strings.ToUpper(strings.TrimSpace(req.SalaryCurrency)),
		City:           strings.TrimSpace(req.City),
		Skills:         []string{},
	}
	// projectId, title, description, city, salaryCurrency and expiresAt are
	// required and bounded by their tags; the id's length stays a 422 here.
	text(&v, "projectId", req.ProjectID, bind.MaxTitle, true)
	d.Salary = v.Amount("salary", req.Salary)
	if d.SalaryCurrency != "" {
		v.Check(currencyCode.MatchString(d.SalaryCurrency), "salaryCurrency", "must be a 3-letter ISO 4217 code such as KZT")
	}
	// The binder refused skills that are not an array of at most 30
	// non-blank strings of at most 100 characters (skillList.Invalid).
	seen := map[string]bool{}
	for _, sk := range req.Skills.list() {
		sk = strings.TrimSpace(sk)
		if k := strings.ToLower(sk); !seen[k] {
			seen[k] = true
			d.Skills = append(d.Skills, sk)
		}
	}
	if strings.TrimSpace(req.ExpiresAt) != "" {
		t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(req.ExpiresAt))
		switch {
		case err != nil:
			v.Fail("expiresAt", "must be an RFC 3339 timestamp such as 2030-01-02T15:04:05Z")
		case !t.After(now):
			v.Fail("expiresAt", "must be in the future")
		default:
			d.ExpiresAt = t.UTC()
		}
	}
	return d, v.Err()
}

// vacancyEvent encodes the outbox row of a vacancy event.
func (h *Handlers) vacancyEvent(typ string, v build.Vacancy, now time.Time) (pipeline.OutboxRow, error) {
	env, err := schemas.New(typ, v.ID, v.EmployerID, schemas.VacancyEvent{
		VacancyID: v.ID, ProjectID: v.ProjectID, EmployerID: v.EmployerID, Title: v.Title, City: v.City,
		Salary: v.Salary, SalaryCurrency: v.SalaryCurrency, Skills: v.Skills, Status: v.Status,
		ExpiresAt: v.ExpiresAt, URL: h.vacancyURL(v.ID),
	}, now)
	if err != nil {
		return pipeline.OutboxRow{}, err
	}
	return pipeline.EventRow(topics.EventsBuild, env)
}

// createVacancy posts an OPEN vacancy and queues vacancy.opened in the same
// transaction → 201 with the vacancy. An unknown project or another
// employer's → 404; no open slot left → 403 plan_vacancy_limit_reached.
func (h *Handlers) createVacancy(c *fiber.Ctx, req *createVacancyRequest) error {
	now := h.now().UTC()
	v, err := req.validate(now)
	if err != nil {
		return err
	}
	if !idFormat.MatchString(v.ProjectID) {
		return errProjectNotFound()
	}
	v.ID, v.EmployerID, v.CreatedAt, v.Status = schemas.NewID(), caller(c), now, schemas.VacancyOpen
	row, err := h.vacancyEvent(schemas.TypeVacancyOpened, v, now)
	if err != nil {
		return err
	}
	err = h.store.CreateVacancy(c.UserContext(), &v, h.cfg.PlanLimit, row)
	switch {
	case errors.Is(err, postgres.ErrNotFound):
		return errProjectNotFound()
	case errors.Is(err, build.ErrPlanLimit):
		return errPlanLimit.With(map[string]any{"limit": h.cfg.PlanLimit})
	case err != nil:
		return err
	}
	return c.Status(http.StatusCreated).JSON(h.vacancyJSON(v))
}
