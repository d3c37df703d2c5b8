package fiat

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/storage/postgres"
)

// WalletStore is what the wallet handlers read and write: the owner's
// wallets, a public one, a transfer's target, a recipient's made on demand,
// freezing.
type WalletStore interface {
	CreateWallet(ctx context.Context, w store.Wallet) error
	WalletsOf(ctx context.Context, userID string) ([]store.Wallet, error)
	Wallet(ctx context.Context, id string) (store.Wallet, error)
	PublicWallet(ctx context.Context, id string) (store.Wallet, string, error)
	TransferTarget(ctx context.Context, fromWalletID, toEmail string) (store.Target, error)
	EnsureWallet(ctx context.Context, userID, currency, newID string, now time.Time) (string, error)
	SetWalletStatus(ctx context.Context, id, status string, audit store.AuditRow) (store.Wallet, error)
	ActiveWallets(ctx context.Context) (int64, error)
}

// Currencies the module holds.
var currencies = []string{"KZT", "USD"}

// registerWallets mounts the wallet routes.
func (h *Handlers) registerWallets(g server.Router, tok fiber.Handler) {
	server.Post(g, "/wallets", server.Op[createWalletRequest]{
		Summary:     "Create a wallet (one per currency)",
		Description: "Opens a wallet for the caller in a currency (one per currency) with a zero balance.",
		Class:       ratelimit.Write, Handle: h.createWallet,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "the new wallet", schemas.FiatWallet{}),
			server.Fails(http.StatusConflict, "wallet_exists: the caller has a wallet in this currency"),
		},
	}, tok)
	server.Get(g, "/wallets", server.Op[server.NoRequest]{
		Summary:     "Own wallets with balances",
		Description: "Lists the caller's wallets with their balances. Read-only.",
		Handle:      h.listWallets,
		Responses:   []server.Response{server.Answers(http.StatusOK, "the caller's wallets", schemas.FiatItems[schemas.FiatWallet]{})},
	}, tok)
	server.Get(g, "/wallets/:id/public", server.Op[walletPath]{
		Summary:     "Public-safe wallet view for receive links",
		Description: "What a payer needs to recognise a receive link (currency, display name): no e-mail, user id or balance. Read-only.",
		Public:      true, Handle: h.publicWallet,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "what a payer needs to recognise a receive link: no e-mail, user id or balance", schemas.FiatPublicWallet{}),
			server.Fails(http.StatusNotFound, "wallet_not_found: no such wallet"),
		},
	})
}

// walletPath is the request of an operation on one wallet.
type walletPath struct {
	ID string `path:"id" json:"-" format:"ksuid"`
}

func toWallet(w store.Wallet) schemas.FiatWallet {
	return schemas.FiatWallet{ID: w.ID, Currency: w.Currency, Balance: w.Balance, Status: w.Status, CreatedAt: w.CreatedAt}
}

func isNotFound(err error) bool { return errors.Is(err, postgres.ErrNotFound) }

type createWalletRequest struct {
	Currency string `json:"currency" required:"true" description:"KZT or USD (any case)"`
}

func (h *Handlers) createWallet(c *fiber.Ctx, req *createWalletRequest) error {
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
	if err := h.wallets.CreateWallet(c.UserContext(), w); err != nil {
		if errors.Is(err, postgres.ErrConflict) {
			return apierr.New(http.StatusConflict, schemas.CodeWalletExists, "you already have a "+cur+" wallet")
		}
		return err
	}
	return c.Status(http.StatusCreated).JSON(toWallet(w))
}

func (h *Handlers) listWallets(c *fiber.Ctx, _ *server.NoRequest) error {
	p, _ := auth.User(c)
	ws, err := h.wallets.WalletsOf(c.UserContext(), p.UserID)
	if err != nil {
		return err
	}
	return c.JSON(itemsOf(ws, toWallet))
}

// publicWallet shows what a payer needs to recognise a receive link: no
// e-mail, no user id, no balance.
func (h *Handlers) publicWallet(c *fiber.Ctx, req *walletPath) error {
	w, name, err := h.wallets.PublicWallet(c.UserContext(), req.ID)
	if err != nil {
		if isNotFound(err) {
			return errWalletNotFound
		}
		return err
	}
	return c.JSON(schemas.FiatPublicWallet{ID: w.ID, Currency: w.Currency, Status: w.Status, OwnerName: name})
}

// setStatus freezes or unfreezes a wallet (admin).
func (h *Handlers) setStatus(status string) func(c *fiber.Ctx, req *walletPath) error {
	return func(c *fiber.Ctx, req *walletPath) error {
		p, _ := auth.User(c)
		id := clean(req.ID)
		now := h.now().UTC()
		action := "wallet.freeze"
		if status == store.StatusActive {
			action = "wallet.unfreeze"
		}
		w, err := h.wallets.SetWalletStatus(c.UserContext(), id, status, store.AuditRow{ID: schemas.NewID(),
			Actor: p.UserID, Action: action, Subject: id, Detail: "by " + p.Email, CreatedAt: now})
		switch {
		case isNotFound(err):
			return errWalletNotFound
		case errors.Is(err, store.ErrInvalidState):
			return apierr.New(http.StatusConflict, schemas.CodeInvalidState, "a deleted wallet cannot change state")
		case err != nil:
			return err
		}
		return c.JSON(toWallet(w))
	}
}
