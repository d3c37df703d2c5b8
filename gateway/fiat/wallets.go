package fiat

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/storage/postgres"
)

// Currencies the module holds.
var currencies = []string{"KZT", "USD"}

type walletJSON struct {
	ID        string    `json:"id"`
	Currency  string    `json:"currency"`
	Balance   int64     `json:"balance"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"createdAt"`
}

func toWalletJSON(w store.Wallet) walletJSON {
	return walletJSON{ID: w.ID, Currency: w.Currency, Balance: w.Balance, Status: w.Status, CreatedAt: w.CreatedAt}
}

func isNotFound(err error) bool { return errors.Is(err, postgres.ErrNotFound) }

type createWalletReq struct {
	Currency string `json:"currency"`
}

func (h *Handlers) createWallet(c *fiber.Ctx) error {
	var req createWalletReq
	if err := bind.JSON(c, &req); err != nil {
		return err
	}
	cur := strings.ToUpper(strings.TrimSpace(req.Currency))
	var v bind.Validator
	if v.Required("currency", cur) {
		v.OneOf("currency", cur, currencies...)
	}
	if err := v.Err(); err != nil {
		return err
	}
	p, _ := auth.User(c)
	w := store.Wallet{ID: schemas.NewID(), UserID: p.UserID, Currency: cur, Status: store.StatusActive,
		Kind: store.KindUser, CreatedAt: h.now().UTC().Truncate(time.Microsecond)}
	if err := h.store.CreateWallet(c.UserContext(), w); err != nil {
		if errors.Is(err, postgres.ErrConflict) {
			return apierr.New(http.StatusConflict, schemas.CodeWalletExists, "you already have a "+cur+" wallet")
		}
		return err
	}
	return c.Status(http.StatusCreated).JSON(toWalletJSON(w))
}

func (h *Handlers) listWallets(c *fiber.Ctx) error {
	p, _ := auth.User(c)
	ws, err := h.store.WalletsOf(c.UserContext(), p.UserID)
	if err != nil {
		return err
	}
	items := make([]walletJSON, len(ws))
	for i, w := range ws {
		items[i] = toWalletJSON(w)
	}
	return c.JSON(fiber.Map{"items": items})
}

type publicWalletJSON struct {
	ID        string `json:"id"`
	Currency  string `json:"currency"`
	Status    string `json:"status"`
	OwnerName string `json:"ownerName"`
}

// publicWallet shows what a payer needs to recognise a receive link: no
// e-mail, no user id, no balance.
func (h *Handlers) publicWallet(c *fiber.Ctx) error {
	w, name, err := h.store.PublicWallet(c.UserContext(), c.Params("id"))
	if err != nil {
		if isNotFound(err) {
			return errWalletNotFound
		}
		return err
	}
	return c.JSON(publicWalletJSON{ID: w.ID, Currency: w.Currency, Status: w.Status, OwnerName: name})
}

// setStatus freezes or unfreezes a wallet (admin).
func (h *Handlers) setStatus(status string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, _ := auth.User(c)
		id := clean(c.Params("id"))
		now := h.now().UTC()
		action := "wallet.freeze"
		if status == store.StatusActive {
			action = "wallet.unfreeze"
		}
		w, err := h.store.SetWalletStatus(c.UserContext(), id, status, store.AuditRow{ID: schemas.NewID(),
			Actor: p.UserID, Action: action, Subject: id, Detail: "by " + p.Email, CreatedAt: now})
		switch {
		case isNotFound(err):
			return errWalletNotFound
		case errors.Is(err, store.ErrInvalidState):
			return apierr.New(http.StatusConflict, schemas.CodeInvalidState, "a deleted wallet cannot change state")
		case err != nil:
			return err
		}
		return c.JSON(toWalletJSON(w))
	}
}
