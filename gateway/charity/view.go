package charity

import (
	"errors"
	"time"

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
