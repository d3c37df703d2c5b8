package charity

import (
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/charity"
)

func amount(v int64) bind.Amount { return bind.Amount{Value: v, Set: true} }

func TestCreateCampaignValidate(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	future, past := "2026-02-01T00:00:00Z", "2025-12-31T00:00:00Z"
	valid := createCampaignRequest{Title: "Wells", Description: "Water", Category: "water", GoalKzt: amount(1000)}
	tests := []struct {
		name  string
		edit  func(r *createCampaignRequest)
		field string // "" when valid
	}{
		{"valid", func(*createCampaignRequest) {}, ""},
		{"with media and endsAt", func(r *createCampaignRequest) {
			r.Media, r.EndsAt = []string{"https://example.com/a.jpg"}, &future
		}, ""},
		{"title missing", func(r *createCampaignRequest) { r.Title = "  " }, "title"},
		{"title too long", func(r *createCampaignRequest) { r.Title = strings.Repeat("é", 201) }, "title"},
		{"title 200 chars", func(r *createCampaignRequest) { r.Title = strings.Repeat("é", 200) }, ""},
		{"description too long", func(r *createCampaignRequest) { r.Description = strings.Repeat("d", 20_001) }, "description"},
		{"category too long", func(r *createCampaignRequest) { r.Category = strings.Repeat("c", 65) }, "category"},
		{"goal missing", func(r *createCampaignRequest) { r.GoalKzt = bind.Amount{} }, "goalKzt"},
		{"goal invalid", func(r *createCampaignRequest) { r.GoalKzt = bind.Amount{Set: true, Problem: "must be positive"} }, "goalKzt"},
		{"media http", func(r *createCampaignRequest) { r.Media = []string{"http://example.com/a.jpg"} }, "media[0]"},
		{"media no host", func(r *createCampaignRequest) { r.Media = []string{"https:///a.jpg"} }, "media[0]"},
		{"media too many", func(r *createCampaignRequest) { r.Media = make([]string, 11) }, "media"},
		{"endsAt past", func(r *createCampaignRequest) { r.EndsAt = &past }, "endsAt"},
		{"endsAt garbage", func(r *createCampaignRequest) { s := "soon"; r.EndsAt = &s }, "endsAt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := valid
			tt.edit(&req)
			err := bind.CheckRules(&req) // the declared tags, as the server checks them
			var c store.Campaign
			if err == nil {
				c, err = req.validate(now)
			}
			if tt.field == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				if c.Media == nil || c.GoalKzt != 1000 {
					t.Fatalf("campaign = %+v", c)
				}
				return
			}
			if err == nil || !strings.Contains(errorFields(err), tt.field) {
				t.Fatalf("want a problem with %s, got %v", tt.field, err)
			}
		})
	}
}

func errorFields(err error) string {
	if e, ok := err.(interface{ Body() []byte }); ok {
		return string(e.Body())
	}
	return err.Error()
}

func TestStatusAndProgress(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	before, after := now.Add(-time.Second), now.Add(time.Second)
	tests := []struct {
		name   string
		c      store.Campaign
		status string
		pct    int64
	}{
		{"pending", store.Campaign{Status: schemas.CampaignPending, GoalKzt: 100}, "pending", 0},
		{"active", store.Campaign{Status: schemas.CampaignActive, GoalKzt: 300, RaisedKzt: 100, EndsAt: &after}, "active", 33},
		{"ended", store.Campaign{Status: schemas.CampaignActive, GoalKzt: 100, RaisedKzt: 150, EndsAt: &before}, "ended", 150},
		{"ends now", store.Campaign{Status: schemas.CampaignActive, GoalKzt: 100, EndsAt: &now}, "ended", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := viewOf(tt.c, now)
			if v.Status != tt.status || v.Progress.Percent != tt.pct || v.Media == nil {
				t.Fatalf("view = %+v", v)
			}
		})
	}
}
