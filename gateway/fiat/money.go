package fiat

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
)

// Endpoint names scope Idempotency-Keys (user, endpoint).
const (
	endpointTransfer = "POST /api/fiat/transfer"
	endpointWithdraw = "POST /api/fiat/withdraw"
	endpointDeposit  = "POST /api/fiat/deposit"
	endpointPayouts  = "POST /api/fiat/payouts"
)

// maxRef bounds short reference strings (wallet ids, bank accounts).
const maxRef = 200

type transferReq struct {
	FromWalletID string      `json:"fromWalletId"`
	ToEmail      string      `json:"toEmail"`
	AmountKzt    bind.Amount `json:"amountKzt"`
	Amount       bind.Amount `json:"amount"`
	Memo         string      `json:"memo"`
}

// transfer validates, resolves the recipient (creating their wallet of the
// currency on demand) and sends the command keyed by the source wallet.
func (h *Handlers) transfer(c *fiber.Ctx) error {
	var req transferReq
	if err := bind.JSON(c, &req); err != nil {
		return err
	}
	p, _ := auth.User(c)
	from, to, memo := clean(req.FromWalletID), clean(req.ToEmail), strings.Clone(req.Memo)
	amountField := req.AmountKzt
	if !amountField.Set && req.Amount.Set {
		amountField = req.Amount
	}
	var v bind.Validator
	if v.Required("fromWalletId", from) {
		v.MaxLen("fromWalletId", from, maxRef)
	}
	v.Email("toEmail", to)
	amount := v.Amount("amountKzt", amountField)
	v.MaxLen("memo", memo, bind.MaxMemo)
	if strings.EqualFold(to, p.Email) {
		v.Fail("toEmail", "must not be your own e-mail")
	}
	if err := v.Err(); err != nil {
		return err
	}
	ctx := c.UserContext()
	t, err := h.store.TransferTarget(ctx, from, to)
	if err != nil {
		if isNotFound(err) {
			return errWalletNotFound
		}
		return err
	}
	if t.From.UserID != p.UserID || t.From.Kind != store.KindUser {
		return errWalletNotFound
	}
	if t.ToUserID == "" {
		return apierr.New(http.StatusNotFound, schemas.CodeRecipientNotFound, "no user has this e-mail")
	}
	if t.ToUserID == p.UserID {
		return apierr.Validation(map[string]string{"toEmail": "must not be your own e-mail"})
	}
	if t.ToWalletID == "" {
		if t.ToWalletID, err = h.store.EnsureWallet(ctx, t.ToUserID, t.From.Currency, schemas.NewID(), h.now().UTC()); err != nil {
			return err
		}
	}
	return h.send(c, endpointTransfer, schemas.TypeFiatTransfer, from, schemas.FiatTransfer{
		FromWalletID: from, ToWalletID: t.ToWalletID, FromUserID: p.UserID, ToUserID: t.ToUserID,
		Amount: amount, Memo: memo,
	})
}

// validateWalletAmount checks the part of a money request that names one of
// the caller's wallets and an amount (`amount`, or the spec's `amountKzt` as
// an alias) and returns the wallet id and the amount.
func validateWalletAmount(v *bind.Validator, walletID string, amount, amountKzt bind.Amount) (string, int64) {
	wid := clean(walletID)
	if v.Required("walletId", wid) {
		v.MaxLen("walletId", wid, maxRef)
	}
	if !amount.Set && amountKzt.Set {
		amount = amountKzt
	}
	return wid, v.Amount("amount", amount)
}

type withdrawReq struct {
	WalletID    string      `json:"walletId"`
	Amount      bind.Amount `json:"amount"`
	AmountKzt   bind.Amount `json:"amountKzt"`
	Destination string      `json:"destination"`
}

func (h *Handlers) withdraw(c *fiber.Ctx) error {
	var req withdrawReq
	if err := bind.JSON(c, &req); err != nil {
		return err
	}
	dest := clean(req.Destination)
	var v bind.Validator
	wid, amount := validateWalletAmount(&v, req.WalletID, req.Amount, req.AmountKzt)
	if v.Required("destination", dest) {
		v.MaxLen("destination", dest, bind.MaxMemo)
	}
	if err := v.Err(); err != nil {
		return err
	}
	if _, err := h.ownWallet(c, wid); err != nil {
		return err
	}
	p, _ := auth.User(c)
	return h.send(c, endpointWithdraw, schemas.TypeFiatWithdraw, wid, schemas.FiatWithdraw{
		WalletID: wid, UserID: p.UserID, Amount: amount, Destination: dest,
	})
}

type payoutReq struct {
	WalletID    string      `json:"walletId"`
	Amount      bind.Amount `json:"amount"`
	AmountKzt   bind.Amount `json:"amountKzt"`
	BankAccount string      `json:"bankAccount"`
}

func (h *Handlers) payout(c *fiber.Ctx) error {
	var req payoutReq
	if err := bind.JSON(c, &req); err != nil {
		return err
	}
	acct := clean(req.BankAccount)
	var v bind.Validator
	wid, amount := validateWalletAmount(&v, req.WalletID, req.Amount, req.AmountKzt)
	if v.Required("bankAccount", acct) {
		v.MaxLen("bankAccount", acct, maxRef)
	}
	if err := v.Err(); err != nil {
		return err
	}
	if _, err := h.ownWallet(c, wid); err != nil {
		return err
	}
	p, _ := auth.User(c)
	payoutID := schemas.NewID()
	sealedAcct, err := h.cfg.Vault.SealText(acct, "payout:"+payoutID)
	if err != nil {
		return err
	}
	return h.send(c, endpointPayouts, schemas.TypeFiatPayoutRequest, wid, schemas.FiatPayoutRequest{
		PayoutID: payoutID, WalletID: wid, UserID: p.UserID, Amount: amount, BankAccount: sealedAcct,
		BankAccountHint: Hint(acct),
	})
}

// decidePayout approves or rejects a payout (admin). The decision goes
// through the consumer because a rejection releases the held funds.
func (h *Handlers) decidePayout(approve bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id := clean(c.Params("id"))
		po, err := h.store.Payout(c.UserContext(), id)
		if err != nil {
			if isNotFound(err) {
				return apierr.New(http.StatusNotFound, schemas.CodePayoutNotFound, "no such payout")
			}
			return err
		}
		p, _ := auth.User(c)
		env, err := schemas.New(schemas.TypeFiatPayoutDecide, po.WalletID, p.UserID,
			schemas.FiatPayoutDecide{PayoutID: po.ID, WalletID: po.WalletID, Approve: approve, AdminID: p.UserID}, h.now())
		if err != nil {
			return err
		}
		return h.sendEnv(c, env)
	}
}

// Hint shows the last four characters of an account number, masking the rest.
func Hint(account string) string {
	r := []rune(account)
	if len(r) <= 4 {
		return "****"
	}
	return "****" + string(r[len(r)-4:])
}
