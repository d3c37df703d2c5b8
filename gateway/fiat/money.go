package fiat

import (
	"context"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
)

// MoneyStore is what the withdrawal and payout handlers read and keep beside
// their commands.
type MoneyStore interface {
	Payout(ctx context.Context, id string) (store.Payout, error)
	SaveWithdrawalDestination(ctx context.Context, d store.WithdrawalDestination) error
}

// Endpoint names scope Idempotency-Keys (user, endpoint).
const (
	endpointTransfer = "POST /api/fiat/transfer"
	endpointWithdraw = "POST /api/fiat/withdraw"
	endpointDeposit  = "POST /api/fiat/deposit"
	endpointPayouts  = "POST /api/fiat/payouts"
)

// maxRef bounds short reference strings (wallet ids, bank accounts).
const maxRef = 200

// registerMoney mounts the routes that move money off a wallet: transfers,
// withdrawals and payouts, and KYC, which lifts their caps.
func (h *Handlers) registerMoney(g server.Router, tok fiber.Handler) {
	debit := []server.Response{
		failsWalletNotFound, failsKeyReused, failsKYC,
		server.Fails(http.StatusBadRequest, "wallet_inactive or insufficient_balance: the wallet is not active, or its balance "+
			"does not cover the amount (insufficient_balance carries required and balance)"),
	}
	server.Post(g, "/transfer", server.Op[transferRequest]{
		Summary:     "Transfer to another user by e-mail (0.1% fee)",
		Description: "Moves money from the caller's wallet to the wallet of the same currency of the user with that e-mail; a 0.1% fee is charged. Debits the caller, credits the recipient, records the transaction.",
		Class:       ratelimit.Money, Handle: h.transfer,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the completed transfer", schemas.FiatTransferResult{}),
			server.Fails(http.StatusNotFound, "wallet_not_found or recipient_not_found: no such wallet of the caller, or no user (wallet) has this e-mail"),
			server.Fails(http.StatusBadRequest, "wallet_inactive or insufficient_balance: a wallet is not active, or the balance "+
				"does not cover the amount plus the 0.1% fee (insufficient_balance carries required, feeKzt and balance)"),
			server.Fails(http.StatusUnprocessableEntity, "validation_failed or currency_mismatch: a field is missing or invalid (fields names each), "+
				"or the recipient's wallet holds another currency"),
			failsKeyReused, failsKYC,
		},
	}, tok)
	server.Post(g, "/withdraw", server.Op[withdrawRequest]{
		Summary:     "Withdraw off-platform",
		Description: "Debits the caller's wallet for a withdrawal off the platform, within the daily limits (higher after KYC). Records the transaction.",
		Class:       ratelimit.Money, Handle: h.withdraw,
		Responses: append([]server.Response{server.Answers(http.StatusCreated, "the completed withdrawal", schemas.FiatWithdrawResult{})}, debit...),
	}, tok)
	server.Post(g, "/payouts", server.Op[payoutRequest]{
		Summary:     "Request a bank payout (admin-reviewed, funds held)",
		Description: "Holds the amount in the caller's wallet and files a payout for a fiat admin to approve (paid) or reject (funds released).",
		Class:       ratelimit.Money, Handle: h.payout,
		Responses: append([]server.Response{server.Answers(http.StatusCreated, "the payout, pending review; its funds are held", schemas.FiatPayoutResult{})}, debit...),
	}, tok)
	server.Post(g, "/kyc/submit", server.Op[kycRequest]{
		Summary:     "Submit KYC documents to lift the caps",
		Description: "Files the caller's KYC submission for a fiat admin to decide; an approved submission lifts the daily caps. Creates a submission.",
		Class:       ratelimit.Write, Handle: h.kycSubmit,
		Responses: []server.Response{server.Answers(http.StatusCreated, "the submission: pending, or approved at once when KYC_AUTO_APPROVE is set", schemas.FiatKYC{})},
	}, tok)
}

type transferRequest struct {
	FromWalletID string      `json:"fromWalletId" required:"true" maxLength:"200" description:"one of the caller's wallets"`
	ToEmail      string      `json:"toEmail" required:"true" format:"email" description:"the recipient's e-mail (not the caller's); their wallet of the currency is created when needed"`
	AmountKzt    bind.Amount `json:"amountKzt" description:"integer minor units (1 to 10^15) of the wallet's currency; amountKzt or amount is required"`
	Amount       bind.Amount `json:"amount" description:"the same as amountKzt: send one (both with different values is refused)"`
	Memo         string      `json:"memo" maxLength:"500"`
}

// transfer validates, resolves the recipient (creating their wallet of the
// currency on demand) and sends the command keyed by the source wallet.
func (h *Handlers) transfer(c *fiber.Ctx, req *transferRequest) error {
	p, _ := auth.User(c)
	from, to, memo := clean(req.FromWalletID), clean(req.ToEmail), strings.Clone(req.Memo)
	var v bind.Validator // fromWalletId, toEmail and memo are bound by their tags
	amount := v.AmountOf("amountKzt", req.AmountKzt, "amount", req.Amount)
	if strings.EqualFold(to, p.Email) {
		v.Fail("toEmail", "must not be your own e-mail")
	}
	if err := v.Err(); err != nil {
		return err
	}
	ctx := c.UserContext()
	t, err := h.transferTarget(ctx, from, to)
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
		if t.ToWalletID, err = h.wallets.EnsureWallet(ctx, t.ToUserID, t.From.Currency, schemas.NewID(), h.now().UTC()); err != nil {
			return err
		}
	}
	h.targets.remember(t, to)
	return h.send(c, endpointTransfer, schemas.TypeFiatTransfer, from, schemas.FiatTransfer{
		FromWalletID: from, ToWalletID: t.ToWalletID, FromUserID: p.UserID, ToUserID: t.ToUserID,
		Amount: amount, Memo: memo,
	})
}

// transferTarget resolves the sending wallet and the recipient's user and
// wallet of its currency, from the caches when both were resolved in the
// last minute. What the handler reads of a target never changes once it
// exists (a wallet's owner, kind and currency; an e-mail's user; a user's
// wallet of a currency), and the consumer checks owner, kind, currency and
// status again under lock, so a cached target can never move money wrongly;
// only complete targets are cached, so a recipient who registers later is
// found at once.
func (h *Handlers) transferTarget(ctx context.Context, from, toEmail string) (store.Target, error) {
	if t, ok := h.targets.get(from, toEmail); ok {
		return t, nil
	}
	return h.wallets.TransferTarget(ctx, from, toEmail)
}

// transferTargets caches the two halves of a transfer target apart — the
// sending wallet, and the recipient of an e-mail in a currency — so that a
// pair never sent before is resolved from them once both halves were seen
// (100 users sending to each other make 100 of each, and 9,900 pairs).
type transferTargets struct {
	wallets    *expirable.LRU[string, store.Wallet]
	recipients *expirable.LRU[string, recipient]
}

type recipient struct{ userID, walletID string }

func newTransferTargets() transferTargets {
	return transferTargets{
		wallets:    expirable.NewLRU[string, store.Wallet](targetCacheSize, nil, targetCacheTTL),
		recipients: expirable.NewLRU[string, recipient](targetCacheSize, nil, targetCacheTTL),
	}
}

func (c transferTargets) get(from, toEmail string) (store.Target, bool) {
	w, ok := c.wallets.Get(from)
	if !ok {
		return store.Target{}, false
	}
	r, ok := c.recipients.Get(recipientKey(toEmail, w.Currency))
	if !ok {
		return store.Target{}, false
	}
	return store.Target{From: w, ToUserID: r.userID, ToWalletID: r.walletID}, true
}

// remember caches a complete target: of the wallet, only what never changes
// (its balance and status do, and the handler reads neither).
func (c transferTargets) remember(t store.Target, toEmail string) {
	c.wallets.Add(t.From.ID, store.Wallet{ID: t.From.ID, UserID: t.From.UserID, Currency: t.From.Currency, Kind: t.From.Kind})
	c.recipients.Add(recipientKey(toEmail, t.From.Currency), recipient{userID: t.ToUserID, walletID: t.ToWalletID})
}

// recipientKey names an e-mail's recipient in a currency; e-mails match
// case-insensitively, as in storage.
func recipientKey(toEmail, currency string) string {
	return strings.ToLower(toEmail) + "\x00" + currency
}

// validateWalletAmount checks the part of a money request that names one of
// the caller's wallets and an amount (`amount`, or the spec's `amountKzt` as
// an alias) and returns the wallet id and the amount.
func validateWalletAmount(v *bind.Validator, walletID string, amount, amountKzt bind.Amount) (string, int64) {
	wid := clean(walletID) // required and bounded by the request type's tags
	return wid, v.AmountOf("amount", amount, "amountKzt", amountKzt)
}

type withdrawRequest struct {
	WalletID    string      `json:"walletId" required:"true" maxLength:"200" description:"one of the caller's wallets"`
	Amount      bind.Amount `json:"amount" description:"integer minor units (1 to 10^15); amount or amountKzt is required"`
	AmountKzt   bind.Amount `json:"amountKzt" description:"the same as amount: send one (both with different values is refused)"`
	Destination string      `json:"destination" required:"true" maxLength:"500" description:"where the money goes off-platform"`
}

func (h *Handlers) withdraw(c *fiber.Ctx, req *withdrawRequest) error {
	dest := clean(req.Destination)
	var v bind.Validator
	wid, amount := validateWalletAmount(&v, req.WalletID, req.Amount, req.AmountKzt)
	if err := v.Err(); err != nil {
		return err
	}
	if _, err := h.ownWallet(c, wid); err != nil {
		return err
	}
	p, _ := auth.User(c)
	// The destination (an IBAN) is sealed at rest like a payout's bank
	// account; the command, memos and the audit carry only its hint.
	withdrawalID := schemas.NewID()
	sealedDest, err := h.vault.SealText(dest, store.WithdrawalAAD(withdrawalID))
	if err != nil {
		return err
	}
	if err := h.money.SaveWithdrawalDestination(c.UserContext(), store.WithdrawalDestination{WithdrawalID: withdrawalID,
		UserID: p.UserID, Sealed: sealedDest, Hint: Hint(dest), CreatedAt: h.now().UTC()}); err != nil {
		return err
	}
	return h.send(c, endpointWithdraw, schemas.TypeFiatWithdraw, wid, schemas.FiatWithdraw{
		WalletID: wid, UserID: p.UserID, Amount: amount, WithdrawalID: withdrawalID, DestinationHint: Hint(dest),
	})
}

type payoutRequest struct {
	WalletID    string      `json:"walletId" required:"true" maxLength:"200" description:"one of the caller's wallets"`
	Amount      bind.Amount `json:"amount" description:"integer minor units (1 to 10^15); amount or amountKzt is required"`
	AmountKzt   bind.Amount `json:"amountKzt" description:"the same as amount: send one (both with different values is refused)"`
	BankAccount string      `json:"bankAccount" required:"true" maxLength:"200" description:"sealed at rest; only its last four characters are ever shown"`
}

func (h *Handlers) payout(c *fiber.Ctx, req *payoutRequest) error {
	acct := clean(req.BankAccount)
	var v bind.Validator
	wid, amount := validateWalletAmount(&v, req.WalletID, req.Amount, req.AmountKzt)
	if err := v.Err(); err != nil {
		return err
	}
	if _, err := h.ownWallet(c, wid); err != nil {
		return err
	}
	p, _ := auth.User(c)
	payoutID := schemas.NewID()
	sealedAcct, err := h.vault.SealText(acct, "payout:"+payoutID)
	if err != nil {
		return err
	}
	return h.send(c, endpointPayouts, schemas.TypeFiatPayoutRequest, wid, schemas.FiatPayoutRequest{
		PayoutID: payoutID, WalletID: wid, UserID: p.UserID, Amount: amount, BankAccount: sealedAcct,
		BankAccountHint: Hint(acct),
	})
}

// payoutPath is the request of an admin's decision on one payout.
type payoutPath struct {
	ID string `path:"id" json:"-" format:"ksuid"`
}

// decidePayout approves or rejects a payout (admin). The decision goes
// through the consumer because a rejection releases the held funds.
func (h *Handlers) decidePayout(approve bool) func(c *fiber.Ctx, req *payoutPath) error {
	return func(c *fiber.Ctx, req *payoutPath) error {
		id := clean(req.ID)
		po, err := h.money.Payout(c.UserContext(), id)
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
func Hint(account string) string { return schemas.AccountHint(account) }
