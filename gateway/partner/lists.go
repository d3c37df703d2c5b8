package partner

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/partner"
)

// listRequest is a page of the caller's records, paged by record id.
type listRequest struct{ bind.IDPaging }

// listOwn answers one page of the caller's records, newest first, as
// decisions.md's `{ items, total, nextCursor }`.
func listOwn[R, T any](c *fiber.Ctx, req *listRequest, fetch func(ctx context.Context, email, after string, limit int) ([]R, int64, error),
	id func(R) string, view func(R) T) error {
	p := req.Page()
	rows, total, err := fetch(c.UserContext(), callerEmail(c), p.After, p.Limit+1)
	if err != nil {
		return err
	}
	return c.JSON(schemas.CountedPage[T]{Page: bind.PageOf(rows, p.Limit, id, view), Total: total})
}

// listRoyalties answers the royalties recorded for the caller's e-mail.
func (h *Handlers) listRoyalties(c *fiber.Ctx, req *listRequest) error {
	return listOwn(c, req, h.reader.Royalties, func(r store.RoyaltyRow) string { return r.ID }, store.RoyaltyRow.View)
}

// listResults answers the podium entries recorded for the caller's e-mail.
func (h *Handlers) listResults(c *fiber.Ctx, req *listRequest) error {
	return listOwn(c, req, h.reader.Prizes, func(r store.PrizeRow) string { return r.ID }, store.PrizeRow.View)
}

// listPayouts answers the certification payouts recorded for the caller's e-mail.
func (h *Handlers) listPayouts(c *fiber.Ctx, req *listRequest) error {
	return listOwn(c, req, h.reader.CertPayouts, func(r store.CertPayoutRow) string { return r.ID }, store.CertPayoutRow.View)
}
