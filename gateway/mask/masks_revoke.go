package mask

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/commands"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/topics"
)

// errMaskNotFound answers for unknown masks and masks of other users alike.
func errMaskNotFound() error { return apierr.NotFound("mask not found") }

// revokeMask soft-revokes one of the caller's masks (status revoked); later
// charges are declined with mask_revoked. Another user's mask is 404. The
// consumer checks ownership again, in order with the mask's other commands.
func (h *Handlers) revokeMask(c *fiber.Ctx, req *maskPath) error {
	user, id := caller(c), req.ID
	if _, err := h.reader.Owned(c.UserContext(), id, user); err != nil {
		if errors.Is(err, postgres.ErrNotFound) {
			return errMaskNotFound()
		}
		return err
	}
	env, err := schemas.New(schemas.TypeMaskRevoke, id, user, schemas.MaskRevoke{MaskID: id, UserID: user}, h.now())
	if err != nil {
		return err
	}
	return commands.Exchange(c, h.sender, topics.MaskCommands, env, commands.Idempotency{})
}
