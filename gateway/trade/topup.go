package trade

import (
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
)

// topUpRequest credits the caller's own account.
type topUpRequest struct {
	AccountID string      `json:"accountId" required:"true" minLength:"1" description:"the caller's account"`
	Amount    topUpAmount `json:"amount" required:"true"`
}

// validate checks the request; ok is false when the account id cannot name
// an account (answered 404, not 422).
func (req topUpRequest) validate() (d schemas.TradeTopUp, ok bool, err error) {
	var v bind.Validator
	d.AccountID = text(&v, "accountId", req.AccountID) // required by its tag
	d.Amount = req.Amount.units()                      // its bounds are checked by the binder (Present, Invalid)
	if err := v.Err(); err != nil {
		return d, true, err
	}
	if err := d.Validate(); err != nil {
		// The checks above imply the command's rule; the consumer applies it too.
		return d, true, fmt.Errorf("trade top-up: %w", err)
	}
	return d, idPattern.MatchString(d.AccountID), nil
}

// topUp credits the caller's own account with at most 10,000 TNU and
// answers 200 with the account after it: { id, balance, updatedAt }.
func (h *Handlers) topUp(c *fiber.Ctx, req *topUpRequest) error {
	d, ok, err := req.validate()
	if err != nil {
		return err
	}
	if !ok {
		return errAccountNotFound
	}
	d.UserID = caller(c).UserID
	return h.send(c, endpointTopUp, schemas.TypeTradeTopUp, d.AccountID, d)
}
