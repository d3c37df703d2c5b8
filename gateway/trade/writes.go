package trade

import (
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/commands"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// Endpoint names scope Idempotency-Keys (user, endpoint).
const (
	endpointTopUp    = "POST " + Prefix + "/topup"
	endpointTransfer = "POST " + Prefix + "/transfer"
)

// send publishes a command keyed by the account it debits and writes the
// consumer's reply byte for byte. Its id derives from (caller, endpoint,
// Idempotency-Key): the same key with the same body answers the original
// response (Idempotent-Replayed: true), with another body 409
// idempotency_key_reused. A request without a key was given one by the
// server (returned in the Idempotency-Key response header), so a retry after
// a 503 is safe; a fresh id is drawn only if none is there.
func (h *Handlers) send(c *fiber.Ctx, endpoint, typ, key string, data any) error {
	user := caller(c).UserID
	idem, err := commands.KeyOf(c)
	if err != nil {
		return err
	}
	if idem == "" {
		idem = schemas.NewID()
		c.Set("Idempotency-Key", idem)
	}
	env, err := schemas.New(typ, key, user, data, h.now())
	if err != nil {
		return err
	}
	return commands.Exchange(c, h.sender, topics.TradeCommands, env, commands.Idempotency{
		Caller: user, Endpoint: endpoint, Key: idem, RequestHash: commands.RequestHash(c.Body())})
}
