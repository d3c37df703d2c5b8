package trade

import (
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
)

type topUpRequest struct {
	AccountID string      `json:"accountId"`
	Amount    amountField `json:"amount"`
}

// validate checks the request; ok is false when the account id cannot name
// an account (answered 404, not 422).
func (req topUpRequest) validate() (d schemas.TradeTopUp, ok bool, err error) {
	var v bind.Validator
	d.AccountID = text(&v, "accountId", req.AccountID)
	if v.Err() == nil {
		v.Required("accountId", d.AccountID)
	}
	d.Amount = schemas.TNU(amount(&v, "amount", req.Amount, schemas.MaxTopUp))
	if err := v.Err(); err != nil {
		return d, true, err
	}
	return d, idPattern.MatchString(d.AccountID), nil
}

// topUp credits the caller's own account with at most 10,000 TNU and
// answers 200 with the account after it: { id, balance, updatedAt }.
func (h *Handlers) topUp(c *fiber.Ctx) error {
	var req topUpRequest
	if err := bind.JSON(c, &req); err != nil {
		return err
	}
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
