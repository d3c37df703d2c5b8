package charity

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/charity"
)

// listCampaignsRequest is a page of approved campaigns, optionally filtered.
type listCampaignsRequest struct {
	bind.Paging
	Category string `query:"category" json:"-" maxLength:"64"`
	Status   string `query:"status" json:"-" enum:"active,ended"`
}

// Validate reads the page; the filters are bound by their tags.
func (req *listCampaignsRequest) Validate() error { return req.Paging.Validate() }

// listCampaigns answers approved campaigns, pinned first, then newest
// first; query category, status (active or ended), cursor and limit.
func (h *Handlers) listCampaigns(c *fiber.Ctx, req *listCampaignsRequest) error {
	page := req.Page()
	category, status := req.Category, req.Status
	var after *store.Cursor
	if page.After != "" {
		pinned, id, ok := strings.Cut(page.After, "|")
		if !ok || (pinned != "0" && pinned != "1") || !validID(id) {
			return apierr.InvalidCursor()
		}
		after = &store.Cursor{Pinned: pinned == "1", ID: id}
	}
	now := h.now().UTC()
	items, total, err := h.reader.List(c.UserContext(), store.Filter{Category: category, Status: status, Now: now},
		after, page.Limit+1)
	if err != nil {
		return err
	}
	out := schemas.CampaignList{Items: []schemas.Campaign{}, Total: total}
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
