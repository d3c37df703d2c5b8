package schemas

import "time"

// Build (partner vacancy) message types. The module writes Postgres directly
// from the gateway (architecture.md: low write rate, no balances) and queues
// these events on events.build keyed by the vacancy id, in the transaction
// that opens or closes the vacancy.
const (
	// TypeVacancyOpened is a vacancy posted with status OPEN.
	TypeVacancyOpened = "vacancy.opened"
	// TypeVacancyClosed is a vacancy its employer closed.
	TypeVacancyClosed = "vacancy.closed"
)

// buildVersions lists the build module's message types and their schema versions.
var buildVersions = map[string]int{
	TypeVacancyOpened: 1,
	TypeVacancyClosed: 1,
}

// Vacancy statuses. EXPIRED is never stored: it is how an OPEN vacancy past
// its expiresAt is shown to its employer (decisions.md: expired vacancies
// are not OPEN); partners, pages and feeds never see it.
const (
	VacancyOpen    = "OPEN"
	VacancyClosed  = "CLOSED"
	VacancyExpired = "EXPIRED"
)

// VacancyEvent is the data of vacancy.opened and vacancy.closed.
type VacancyEvent struct {
	VacancyID      string    `json:"vacancyId"`
	ProjectID      string    `json:"projectId"`
	EmployerID     string    `json:"userId"`
	Title          string    `json:"title"`
	City           string    `json:"city"`
	Salary         int64     `json:"salary"`
	SalaryCurrency string    `json:"salaryCurrency"`
	Skills         []string  `json:"skills"`
	Status         string    `json:"status"`
	ExpiresAt      time.Time `json:"expiresAt"`
	URL            string    `json:"url"`
}

// BuildProject is the API shape of an employer's project.
type BuildProject struct {
	ID          string `json:"id" required:"true" format:"ksuid"`
	Name        string `json:"name" required:"true"`
	Description string `json:"description" required:"true"`
	City        string `json:"city" required:"true"`
	URL         string `json:"url" required:"true" description:"the project's own http(s) site; empty when none"`
	PageURL     string `json:"pageUrl" required:"true" format:"uri" description:"the project's public page"`
	CreatedAt   string `json:"createdAt" required:"true" format:"date-time"`
}

// BuildProjects is a page of the caller's projects, newest first.
type BuildProjects struct {
	Items  []BuildProject `json:"items" required:"true" nullable:"false"`
	Limit  int            `json:"limit" required:"true" minimum:"1" maximum:"200"`
	Offset int            `json:"offset" required:"true" minimum:"0"`
}

// VacancyProject names the project of a vacancy.
type VacancyProject struct {
	ID   string `json:"id" required:"true" format:"ksuid"`
	Name string `json:"name" required:"true"`
}

// Vacancy is the spec's vacancy (partner interface), plus the project's
// id, the status and, for the employer, closedAt. Times are RFC 3339 to the
// second, in UTC.
type Vacancy struct {
	ID             string         `json:"id" required:"true" format:"ksuid"`
	Title          string         `json:"title" required:"true"`
	Description    string         `json:"description" required:"true"`
	Salary         int64          `json:"salary" required:"true" description:"integer minor units"`
	SalaryCurrency string         `json:"salaryCurrency" required:"true" pattern:"^[A-Z]{3}$"`
	Skills         []string       `json:"skills" required:"true" nullable:"false"`
	City           string         `json:"city" required:"true"`
	Project        VacancyProject `json:"project" required:"true"`
	URL            string         `json:"url" required:"true" format:"uri" description:"the vacancy's public page"`
	Status         string         `json:"status" required:"true" enum:"OPEN,CLOSED,EXPIRED"`
	CreatedAt      string         `json:"createdAt" required:"true" format:"date-time"`
	ExpiresAt      string         `json:"expiresAt" required:"true" format:"date-time"`
	ClosedAt       *string        `json:"closedAt,omitempty" format:"date-time" nullable:"false"`
}

// Vacancies is an offset page of vacancies, newest first.
type Vacancies struct {
	Items  []Vacancy `json:"items" required:"true" nullable:"false"`
	Total  int       `json:"total" required:"true" minimum:"0"`
	Limit  int       `json:"limit" required:"true" minimum:"1" maximum:"200"`
	Offset int       `json:"offset" required:"true" minimum:"0"`
	// NextCursor pages on from the last item (partner API: the `cursor`
	// query; offset stops at 1000); absent on the last page.
	NextCursor *string `json:"nextCursor,omitempty" nullable:"false"`
}

// PartnerVacancies is the partner API's answer of a list:
// { success: true, data: { items, total, limit, offset } }.
type PartnerVacancies struct {
	Success bool      `json:"success" required:"true" description:"always true"`
	Data    Vacancies `json:"data" required:"true"`
}

// PartnerVacancy is the partner API's answer of one vacancy.
type PartnerVacancy struct {
	Success bool    `json:"success" required:"true" description:"always true"`
	Data    Vacancy `json:"data" required:"true"`
}

// PartnerAPIHealth is the partner API's health and version.
type PartnerAPIHealth struct {
	Status     string `json:"status" required:"true" enum:"ok"`
	APIVersion string `json:"apiVersion" required:"true" enum:"v1"`
}

// PartnerKey is an employer's partner key. Key, the plaintext, is only in
// the answer that mints it; the platform keeps its SHA-256.
type PartnerKey struct {
	ID        string  `json:"id" required:"true" format:"ksuid"`
	Key       string  `json:"key,omitempty" pattern:"^qb_pk_[A-Za-z0-9_-]{22,}$" description:"the plaintext key, shown only when minted"`
	CreatedAt string  `json:"createdAt" required:"true" format:"date-time"`
	RevokedAt *string `json:"revokedAt,omitempty" format:"date-time" nullable:"false"`
}

// PartnerKeys is the caller's partner keys, without their plaintext.
type PartnerKeys struct {
	Items []PartnerKey `json:"items" required:"true" nullable:"false"`
}
