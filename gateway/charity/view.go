package charity

import (
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/charity"
	"github.com/fintech/platform/storage/postgres"
)

// recentDonorCount is how many recent non-anonymous donors a read shows.
const recentDonorCount = 10

type progressView struct {
	RaisedKzt int64 `json:"raisedKzt"`
	GoalKzt   int64 `json:"goalKzt"`
	// Percent is floor(raised * 100 / goal); it passes 100 when a campaign
	// raises more than its goal.
	Percent    int64 `json:"percent"`
	DonorCount int64 `json:"donorCount"`
}

type donorView struct {
	Name      string    `json:"name"`
	AmountKzt int64     `json:"amountKzt"`
	DonatedAt time.Time `json:"donatedAt"`
}

// campaignView is the API shape of a campaign. RecentDonors is set only by
// the single read.
type campaignView struct {
	ID            string       `json:"id"`
	Title         string       `json:"title"`
	Description   string       `json:"description"`
	Category      string       `json:"category"`
	GoalKzt       int64        `json:"goalKzt"`
	Media         []string     `json:"media"`
	EndsAt        *time.Time   `json:"endsAt"`
	Status        string       `json:"status"`
	Pinned        bool         `json:"pinned"`
	Featured      bool         `json:"featured"`
	CreatedAt     time.Time    `json:"createdAt"`
	ApprovedAt    *time.Time   `json:"approvedAt"`
	GoalReachedAt *time.Time   `json:"goalReachedAt"`
	Progress      progressView `json:"progress"`
	RecentDonors  *[]donorView `json:"recentDonors,omitempty"`
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// statusOf is the shown status: an active campaign past endsAt is "ended".
func statusOf(c store.Campaign, now time.Time) string {
	if c.Status == schemas.CampaignActive && c.EndsAt != nil && !now.Before(*c.EndsAt) {
		return schemas.CampaignEnded
	}
	return c.Status
}

func viewOf(c store.Campaign, now time.Time) campaignView {
	media := c.Media
	if media == nil {
		media = []string{}
	}
	return campaignView{ID: c.ID, Title: c.Title, Description: c.Description, Category: c.Category, GoalKzt: c.GoalKzt,
		Media: media, EndsAt: utc(c.EndsAt), Status: statusOf(c, now), Pinned: c.Pinned, Featured: c.Featured,
		CreatedAt: c.CreatedAt.UTC(), ApprovedAt: utc(c.ApprovedAt), GoalReachedAt: utc(c.GoalReachedAt),
		Progress: progressView{RaisedKzt: c.RaisedKzt, GoalKzt: c.GoalKzt, Percent: c.RaisedKzt * 100 / c.GoalKzt,
			DonorCount: c.DonorCount}}
}

func isNotFound(err error) bool { return errors.Is(err, postgres.ErrNotFound) }

// text checks a string the API accepts: valid UTF-8, no NUL bytes, at most
// max characters; required ones must not be blank.
func text(v *bind.Validator, field, s string, max int, required bool) {
	switch {
	case !utf8.ValidString(s) || strings.ContainsRune(s, 0):
		v.Fail(field, "must be valid UTF-8 text without NUL bytes")
	case required && strings.TrimSpace(s) == "":
		v.Fail(field, "is required")
	default:
		v.MaxLen(field, s, max)
	}
}
