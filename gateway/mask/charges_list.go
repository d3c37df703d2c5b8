package mask

import (
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/mask"
	"github.com/fintech/platform/storage/postgres"
)

// listChargesRequest is a page of the caller's charges, of one mask or all.
type listChargesRequest struct {
	bind.TimePaging
	MaskID string `query:"maskId" json:"-" description:"only the charges of this mask of the caller"`
}

// listCharges answers the caller's charges, newest first, paginated;
// `maskId` narrows them to one of the caller's masks (another user's mask
// is 404).
func (h *Handlers) listCharges(c *fiber.Ctx, req *listChargesRequest) error {
	p := req.Page()
	user, maskID := caller(c), strings.TrimSpace(req.MaskID)
	if maskID != "" {
		if _, err := h.reader.Owned(c.UserContext(), maskID, user); err != nil {
			if errors.Is(err, postgres.ErrNotFound) {
				return errMaskNotFound()
			}
			return err
		}
	}
	rows, err := h.reader.ListCharges(c.UserContext(), user, maskID, req.Position(), p.Limit+1)
	if err != nil {
		return err
	}
	return c.JSON(bind.PageOf(rows, p.Limit, func(r store.ChargeRow) string { return schemas.Position{At: r.CreatedAt, ID: r.ID}.String() },
		func(r store.ChargeRow) schemas.MaskChargeResult { return r.View() }))
}
