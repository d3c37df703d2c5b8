package fiat

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
)

// KYCStore is what the KYC handlers write: submissions and decisions.
type KYCStore interface {
	CreateKYC(ctx context.Context, k store.KYC, audit store.AuditRow) error
	DecideKYC(ctx context.Context, id string, approve bool, now time.Time, audit store.AuditRow) (store.KYC, error)
}

type kycRequest struct {
	FullName       string `json:"fullName" required:"true" maxLength:"200"`
	DocumentType   string `json:"documentType" required:"true" maxLength:"64" description:"e.g. passport or id_card"`
	DocumentNumber string `json:"documentNumber" required:"true" maxLength:"64" description:"sealed at rest"`
	Country        string `json:"country" required:"true" maxLength:"64"`
}

func (h *Handlers) kycSubmit(c *fiber.Ctx, req *kycRequest) error {
	k := store.KYC{FullName: clean(req.FullName), DocumentType: clean(req.DocumentType),
		DocumentNumber: clean(req.DocumentNumber), Country: clean(req.Country)}
	// Every field's presence and length is bound by its tags.
	p, _ := auth.User(c)
	now := h.now().UTC().Truncate(time.Microsecond)
	k.ID, k.UserID, k.Status, k.CreatedAt = schemas.NewID(), p.UserID, "pending", now
	sealedNumber, err := h.vault.SealText(k.DocumentNumber, "kyc:"+k.ID)
	if err != nil {
		return err
	}
	k.DocumentNumber = sealedNumber
	action := "kyc.submit"
	if h.cfg.KYCAutoApprove {
		k.Status, k.DecidedAt, action = "approved", &now, "kyc.auto_approve"
	}
	if err := h.kyc.CreateKYC(c.UserContext(), k, store.AuditRow{ID: schemas.NewID(), Actor: p.UserID,
		Action: action, Subject: p.UserID + ":" + k.ID, Detail: k.DocumentType + " " + k.Country, CreatedAt: now}); err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(schemas.FiatKYC{ID: k.ID, Status: k.Status, CreatedAt: k.CreatedAt, DecidedAt: k.DecidedAt})
}

// kycPath is the request of an admin's decision on one KYC submission.
type kycPath struct {
	ID string `path:"id" json:"-" format:"ksuid"`
}

// decideKYC approves (caps lift at once) or rejects a pending submission.
func (h *Handlers) decideKYC(approve bool) func(c *fiber.Ctx, req *kycPath) error {
	return func(c *fiber.Ctx, req *kycPath) error {
		p, _ := auth.User(c)
		id := clean(req.ID)
		action := "kyc.reject"
		if approve {
			action = "kyc.approve"
		}
		now := h.now().UTC().Truncate(time.Microsecond)
		k, err := h.kyc.DecideKYC(c.UserContext(), id, approve, now, store.AuditRow{ID: schemas.NewID(),
			Actor: p.UserID, Action: action, Detail: "by " + p.Email, CreatedAt: now})
		switch {
		case isNotFound(err):
			return apierr.New(http.StatusNotFound, schemas.CodeKYCNotFound, "no such KYC submission")
		case errors.Is(err, store.ErrInvalidState):
			return apierr.New(http.StatusConflict, schemas.CodeInvalidState, "the submission was already decided")
		case err != nil:
			return err
		}
		return c.JSON(schemas.FiatKYC{ID: k.ID, Status: k.Status, UserID: k.UserID, CreatedAt: k.CreatedAt, DecidedAt: k.DecidedAt})
	}
}
