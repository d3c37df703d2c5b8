package ledger

import (
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/server"
)

// verify answers the chain verification. A public caller cannot make the
// server walk the whole chain: the verifier walks only the entries appended
// since the last verified head (the whole chain is walked in the
// background, on a schedule), one walk at a time.
func (h *Handlers) verify(c *fiber.Ctx, _ *server.NoRequest) error {
	ctx := c.UserContext()
	select {
	case h.verifying <- struct{}{}:
		defer func() { <-h.verifying }()
	case <-ctx.Done():
		return apierr.Unavailable()
	}
	res, err := h.verifier.Verify(ctx)
	if err != nil {
		return err
	}
	return c.JSON(res)
}
