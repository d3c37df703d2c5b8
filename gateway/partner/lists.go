package partner

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/partner"
)

// listRequest is a page of the caller's records, newest first by the time
// the platform received them, then id.
type listRequest struct{ bind.TimePaging }

// listOwn answers one page of the caller's records, newest first, as
// decisions.md's `{ items, total, nextCursor }`.
func listOwn[R, T any](c *fiber.Ctx, req *listRequest, fetch func(ctx context.Context, email string, before schemas.Position, limit int) ([]R, int64, error),
	position func(R) schemas.Position, view func(R) T) error {
	p := req.Page()
	rows, total, err := fetch(c.UserContext(), callerEmail(c), req.Position(), p.Limit+1)
	if err != nil {
		return err
	}
	cursor := func(r R) string { return position(r).String() }
	return c.JSON(schemas.CountedPage[T]{Page: bind.PageOf(rows, p.Limit, cursor, view), Total: total})
}

// listRoyalties answers the royalties recorded for the caller's e-mail.
func (h *Handlers) listRoyalties(c *fiber.Ctx, req *listRequest) error {
	return listOwn(c, req, h.reader.Royalties, func(r store.RoyaltyRow) schemas.Position { return schemas.Position{At: r.RecordedAt, ID: r.ID} }, store.RoyaltyRow.View)
}

// listResults answers the podium entries recorded for the caller's e-mail.
func (h *Handlers) listResults(c *fiber.Ctx, req *listRequest) error {
	return listOwn(c, req, h.reader.Prizes, func(r store.PrizeRow) schemas.Position { return schemas.Position{At: r.RecordedAt, ID: r.ID} }, store.PrizeRow.View)
}

// listPayouts answers the certification payouts recorded for the caller's e-mail.
func (h *Handlers) listPayouts(c *fiber.Ctx, req *listRequest) error {
	return listOwn(c, req, h.reader.CertPayouts, func(r store.CertPayoutRow) schemas.Position { return schemas.Position{At: r.RecordedAt, ID: r.ID} }, store.CertPayoutRow.View)
}
