package charity

import (
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/schemas"
)

// Locals keys of the admin probe.
const (
	adminKey  = "charity.admin"
	servedKey = "charity.served"
)

// probeAdmin records whether the (optional) caller is a charity admin,
// asking the module's admin middleware itself so that the platform's one
// admin rule applies: when the middleware admits the caller it calls the
// next handler with the flag set; when it refuses, the refusal is dropped
// and the next handler runs without it.
func (h *Handlers) probeAdmin(c *fiber.Ctx) error {
	if _, ok := auth.User(c); !ok {
		return c.Next()
	}
	c.Locals(adminKey, true)
	err := h.admin(c)
	if served, _ := c.Locals(servedKey).(bool); served {
		return err
	}
	c.Locals(adminKey, false)
	return c.Next()
}

func isAdmin(c *fiber.Ctx) bool {
	a, _ := c.Locals(adminKey).(bool)
	return a
}

// getCampaign answers one campaign with progress, its last 10
// non-anonymous donors and media. A pending campaign is 404 to everyone but
// its proposer and charity admins.
func (h *Handlers) getCampaign(c *fiber.Ctx, req *campaignPath) error {
	c.Locals(servedKey, true)
	camp, err := h.campaign(c, req.ID, isAdmin(c))
	if err != nil {
		return err
	}
	if camp.DonorCount, err = h.reader.DonorCount(c.UserContext(), camp.ID); err != nil {
		return err
	}
	donors, err := h.reader.RecentDonors(c.UserContext(), camp.ID, recentDonorCount)
	if err != nil {
		return err
	}
	list := make([]schemas.CampaignDonor, len(donors))
	for i, d := range donors {
		list[i] = schemas.CampaignDonor{Name: d.Name, AmountKzt: d.AmountKzt, DonatedAt: d.DonatedAt.UTC()}
	}
	v := viewOf(camp, h.now().UTC())
	v.RecentDonors = &list
	return c.JSON(v)
}
