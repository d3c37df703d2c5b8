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

func viewOf(c store.Campaign, now time.Time) schemas.Campaign {
	media := c.Media
	if media == nil {
		media = []string{}
	}
	return schemas.Campaign{ID: c.ID, Title: c.Title, Description: c.Description, Category: c.Category, GoalKzt: c.GoalKzt,
		Media: media, EndsAt: utc(c.EndsAt), Status: statusOf(c, now), Pinned: c.Pinned, Featured: c.Featured,
		CreatedAt: c.CreatedAt.UTC(), ApprovedAt: utc(c.ApprovedAt), GoalReachedAt: utc(c.GoalReachedAt),
		Progress: schemas.CampaignProgress{RaisedKzt: c.RaisedKzt, GoalKzt: c.GoalKzt, Percent: c.RaisedKzt * 100 / c.GoalKzt,
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
