package fiat

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
)

// listReviews is the fiat admins' queue of paid deposits that could not be
// credited (status needs_review; `status=refunded` lists the refunded ones).
func (h *Handlers) listReviews(c *fiber.Ctx) error {
	page, err := bind.PageQuery(c)
	if err != nil {
		return err
	}
	status := c.Query("status", schemas.DepositNeedsReview)
	if status != schemas.DepositNeedsReview && status != schemas.DepositRefunded {
		return apierr.Validation(map[string]string{"status": "must be needs_review or refunded"})
	}
	ds, err := h.store.DepositsByStatus(c.UserContext(), status, page.After, page.Limit+1)
	if err != nil {
		return err
	}
	return depositPage(c, ds, page.Limit)
}

type reviewRequest struct {
	Reason string `json:"reason"`
}

// reviewDeposit sends an admin's decision on a deposit in needs_review
// (credit it to its wallet, or refund it to the processor) through
// fiat.commands, keyed by the deposit's wallet.
func (h *Handlers) reviewDeposit(action string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var req reviewRequest
		if len(c.Body()) > 0 {
			if err := bind.JSON(c, &req); err != nil {
				return err
			}
		}
		var v bind.Validator
		v.MaxLen("reason", req.Reason, bind.MaxMemo)
		if err := v.Err(); err != nil {
			return err
		}
		d, err := h.store.Deposit(c.UserContext(), clean(c.Params("id")))
		if err != nil {
			if isNotFound(err) {
				return apierr.New(http.StatusNotFound, schemas.CodeDepositNotFound, "no such deposit")
			}
			return err
		}
		p, _ := auth.User(c)
		return h.send(c, "POST "+Prefix+"/admin/deposits/"+d.ID+"/"+action, schemas.TypeFiatDepositReview, d.WalletID,
			schemas.FiatDepositReview{DepositID: d.ID, WalletID: d.WalletID, Action: action, AdminUserID: p.UserID,
				Reason: clean(req.Reason)})
	}
}
