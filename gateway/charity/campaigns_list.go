package charity

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/charity"
)

type listResponse struct {
	Items      []campaignView `json:"items"`
	Total      int64          `json:"total"`
	NextCursor *string        `json:"nextCursor"`
}

// listCampaigns answers approved campaigns, pinned first, then newest
// first; query category, status (active or ended), cursor and limit.
func (h *Handlers) listCampaigns(c *fiber.Ctx) error {
	page, err := bind.PageQuery(c)
	if err != nil {
		return err
	}
	var v bind.Validator
	category, status := c.Query("category"), c.Query("status")
	text(&v, "category", category, maxCategory, false)
	if status != "" {
		v.OneOf("status", status, schemas.CampaignActive, schemas.CampaignEnded)
	}
	if err := v.Err(); err != nil {
		return err
	}
	var after *store.Cursor
	if page.After != "" {
		pinned, id, ok := strings.Cut(page.After, "|")
		if !ok || (pinned != "0" && pinned != "1") || !validID(id) {
			return apierr.InvalidCursor()
		}
		after = &store.Cursor{Pinned: pinned == "1", ID: id}
	}
	now := h.d.Now().UTC()
	items, total, err := h.d.Reader.List(c.UserContext(), store.Filter{Category: category, Status: status, Now: now},
		after, page.Limit+1)
	if err != nil {
		return err
	}
	out := listResponse{Items: []campaignView{}, Total: total}
	if len(items) > page.Limit {
		items = items[:page.Limit]
		last := items[len(items)-1]
		p := "0"
		if last.Pinned {
			p = "1"
		}
		next := bind.Cursor(p + "|" + last.ID)
		out.NextCursor = &next
	}
	for _, it := range items {
		out.Items = append(out.Items, viewOf(it, now))
	}
	return c.JSON(out)
}
