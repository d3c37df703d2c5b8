package trade

import (
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
)

// transferRequest moves an amount from the caller's account to another.
type transferRequest struct {
	From   string         `json:"from" required:"true" minLength:"1" description:"the caller's account"`
	To     string         `json:"to" required:"true" minLength:"1" description:"another account (see /accounts/lookup)"`
	Amount transferAmount `json:"amount" required:"true"`
}

// validate checks the request; ok is false when from or to cannot name an
// account (answered 404, not 422).
func (req transferRequest) validate() (d schemas.TradeTransfer, ok bool, err error) {
	var v bind.Validator
	d.From = text(&v, "from", req.From)
	d.To = text(&v, "to", req.To)
	if v.Err() == nil { // from and to are required by their tags
		v.Check(d.From == "" || d.From != d.To, "to", "must be another account than from")
	}
	d.Amount = req.Amount.units() // its bounds are checked by the binder (Present, Invalid)
	if err := v.Err(); err != nil {
		return d, true, err
	}
	if err := d.Validate(); err != nil {
		// The checks above imply the command's rule; the consumer applies it too.
		return d, true, fmt.Errorf("trade transfer: %w", err)
	}
	return d, idPattern.MatchString(d.From) && idPattern.MatchString(d.To), nil
}

// transfer moves an amount from the caller's account to another and answers
// 201 with the transfer { id, from, to, amount }. The command is keyed by
// from, so every debit of an account is decided in order; the consumer
// credits to in the same transaction. 404 account_not_found when from is not
// the caller's or to does not exist; 400 insufficient_balance.
func (h *Handlers) transfer(c *fiber.Ctx, req *transferRequest) error {
	d, ok, err := req.validate()
	if err != nil {
		return err
	}
	if !ok {
		return errAccountNotFound
	}
	d.UserID = caller(c).UserID
	return h.send(c, endpointTransfer, schemas.TypeTradeTransfer, d.From, d)
}
