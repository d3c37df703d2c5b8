package fiat

import (
	"errors"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
)

const maxShort = 64

type kycReq struct {
	FullName       string `json:"fullName"`
	DocumentType   string `json:"documentType"`
	DocumentNumber string `json:"documentNumber"`
	Country        string `json:"country"`
}

type kycJSON struct {
	ID        string     `json:"id"`
	Status    string     `json:"status"`
	UserID    string     `json:"userId,omitempty"`
	CreatedAt time.Time  `json:"createdAt"`
	DecidedAt *time.Time `json:"decidedAt,omitempty"`
}

func (h *Handlers) kycSubmit(c *fiber.Ctx) error {
	var req kycReq
	if err := bind.JSON(c, &req); err != nil {
		return err
	}
	k := store.KYC{FullName: clean(req.FullName), DocumentType: clean(req.DocumentType),
		DocumentNumber: clean(req.DocumentNumber), Country: clean(req.Country)}
	var v bind.Validator
	if v.Required("fullName", k.FullName) {
		v.MaxLen("fullName", k.FullName, bind.MaxTitle)
	}
	if v.Required("documentType", k.DocumentType) {
		v.MaxLen("documentType", k.DocumentType, maxShort)
	}
	if v.Required("documentNumber", k.DocumentNumber) {
		v.MaxLen("documentNumber", k.DocumentNumber, maxShort)
	}
	if v.Required("country", k.Country) {
		v.MaxLen("country", k.Country, maxShort)
	}
	if err := v.Err(); err != nil {
		return err
	}
	p, _ := auth.User(c)
	now := h.now().UTC().Truncate(time.Microsecond)
	k.ID, k.UserID, k.Status, k.CreatedAt = schemas.NewID(), p.UserID, "pending", now
	sealedNumber, err := h.cfg.Vault.SealText(k.DocumentNumber, "kyc:"+k.ID)
	if err != nil {
		return err
	}
	k.DocumentNumber = sealedNumber
	action := "kyc.submit"
	if h.cfg.KYCAutoApprove {
		k.Status, k.DecidedAt, action = "approved", &now, "kyc.auto_approve"
	}
	if err := h.store.CreateKYC(c.UserContext(), k, store.AuditRow{ID: schemas.NewID(), Actor: p.UserID,
		Action: action, Subject: p.UserID + ":" + k.ID, Detail: k.DocumentType + " " + k.Country, CreatedAt: now}); err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(kycJSON{ID: k.ID, Status: k.Status, CreatedAt: k.CreatedAt, DecidedAt: k.DecidedAt})
}

// decideKYC approves (caps lift at once) or rejects a pending submission.
func (h *Handlers) decideKYC(approve bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, _ := auth.User(c)
		id := clean(c.Params("id"))
		action := "kyc.reject"
		if approve {
			action = "kyc.approve"
		}
		now := h.now().UTC().Truncate(time.Microsecond)
		k, err := h.store.DecideKYC(c.UserContext(), id, approve, now, store.AuditRow{ID: schemas.NewID(),
			Actor: p.UserID, Action: action, Detail: "by " + p.Email, CreatedAt: now})
		switch {
		case isNotFound(err):
			return apierr.New(http.StatusNotFound, schemas.CodeKYCNotFound, "no such KYC submission")
		case errors.Is(err, store.ErrInvalidState):
			return apierr.New(http.StatusConflict, schemas.CodeInvalidState, "the submission was already decided")
		case err != nil:
			return err
		}
		return c.JSON(kycJSON{ID: k.ID, Status: k.Status, UserID: k.UserID, CreatedAt: k.CreatedAt, DecidedAt: k.DecidedAt})
	}
}
