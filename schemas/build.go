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
