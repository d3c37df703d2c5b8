package fiat

import (
	"bytes"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
)

// listReviewsRequest is a page of the review queue.
type listReviewsRequest struct {
	bind.TimePaging
	Status string `query:"status" json:"-" enum:"needs_review,refunded" default:"needs_review" description:"needs_review (the default) or refunded"`
}

// Validate reads the page, then the status.
func (req *listReviewsRequest) Validate() error {
	if err := req.TimePaging.Validate(); err != nil {
		return err
	}
	if req.Status == "" {
		req.Status = schemas.DepositNeedsReview
	}
	if req.Status != schemas.DepositNeedsReview && req.Status != schemas.DepositRefunded {
		return apierr.Validation(map[string]string{"status": "must be needs_review or refunded"})
	}
	return nil
}

// listReviews is the fiat admins' queue of paid deposits that could not be
// credited (status needs_review; `status=refunded` lists the refunded ones).
func (h *Handlers) listReviews(c *fiber.Ctx, req *listReviewsRequest) error {
	page := req.Page()
	ds, err := h.deposits.DepositsByStatus(c.UserContext(), req.Status, req.Position(), page.Limit+1)
	if err != nil {
		return err
	}
	return c.JSON(depositPage(ds, page.Limit))
}

// reviewRequest is an admin's decision on one deposit in needs_review; the
// body may be left out.
type reviewRequest struct {
	ID     string `path:"id" json:"-" format:"ksuid"`
	Reason string `json:"reason" maxLength:"500" description:"recorded in the audit log (and the deposit.refunded event)"`
}

// BodyIsOptional lets the body be left out.
func (*reviewRequest) BodyIsOptional() {}

// reviewDeposit sends an admin's decision on a deposit in needs_review
// (credit it to its wallet, or refund it to the processor) through
// fiat.commands, keyed by the deposit's wallet.
func (h *Handlers) reviewDeposit(action string) func(c *fiber.Ctx, req *reviewRequest) error {
	return func(c *fiber.Ctx, req *reviewRequest) error {
		if len(c.Body()) > 0 && len(bytes.TrimSpace(c.Body())) == 0 {
			// A body of blanks is read, and refused, as before the body
			// became optional.
			return bind.JSON(c, &reviewRequest{})
		}
		d, err := h.deposits.Deposit(c.UserContext(), clean(req.ID))
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
