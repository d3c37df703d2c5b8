package partner

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	store "github.com/fintech/platform/storage/partner"
)

// listResponse is the `{ items, total, nextCursor }` shape of decisions.md:
// nextCursor is always present, null once the list is exhausted.
type listResponse[T any] struct {
	Items      []T     `json:"items"`
	Total      int64   `json:"total"`
	NextCursor *string `json:"nextCursor"`
}

// listOwn answers one page of the caller's records, newest first.
func listOwn[R, T any](c *fiber.Ctx, fetch func(ctx context.Context, email, after string, limit int) ([]R, int64, error),
	id func(R) string, view func(R) T) error {
	p, err := bind.IDPageQuery(c)
	if err != nil {
		return err
	}
	rows, total, err := fetch(c.UserContext(), callerEmail(c), p.After, p.Limit+1)
	if err != nil {
		return err
	}
	out := listResponse[T]{Items: make([]T, 0, min(len(rows), p.Limit)), Total: total}
	if len(rows) > p.Limit {
		rows = rows[:p.Limit]
		next := bind.Cursor(id(rows[len(rows)-1]))
		out.NextCursor = &next
	}
	for _, r := range rows {
		out.Items = append(out.Items, view(r))
	}
	return c.JSON(out)
}

// listRoyalties answers the royalties recorded for the caller's e-mail.
func (h *Handlers) listRoyalties(c *fiber.Ctx) error {
	return listOwn(c, h.reader.Royalties, func(r store.RoyaltyRow) string { return r.ID }, store.RoyaltyRow.View)
}

// listResults answers the podium entries recorded for the caller's e-mail.
func (h *Handlers) listResults(c *fiber.Ctx) error {
	return listOwn(c, h.reader.Prizes, func(r store.PrizeRow) string { return r.ID }, store.PrizeRow.View)
}

// listPayouts answers the certification payouts recorded for the caller's e-mail.
func (h *Handlers) listPayouts(c *fiber.Ctx) error {
	return listOwn(c, h.reader.CertPayouts, func(r store.CertPayoutRow) string { return r.ID }, store.CertPayoutRow.View)
}
