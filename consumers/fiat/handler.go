// Package fiat is the fiat-applier consumer: it applies the commands of
// fiat.commands (transfers, deposits, withdrawals, payouts) to the wallets
// in batches. For a batch it locks every wallet the commands touch with one
// statement in id order, applies the commands in partition order in memory,
// and writes the final balances, the transactions and the audit rows back
// with one statement each, so the cost per command is a few microseconds of
// Go, not round trips; the hot fee wallet is updated once per batch.
package fiat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/topics"
)

// Reputation weights of the spec's table.
const (
	weightWalletActive  = 1
	weightWalletDeposit = 2
	weightWalletPayout  = 3
)

// Handler applies fiat commands.
type Handler struct {
	caps schemas.FiatCaps
	now  func() time.Time
	log  *slog.Logger
}

var _ pipeline.Handler = (*Handler)(nil)

// NewHandler builds the handler.
func NewHandler(caps schemas.FiatCaps, now func() time.Time, log *slog.Logger) (*Handler, error) {
	if now == nil || log == nil {
		return nil, errors.New("fiat handler: nil dependency")
	}
	if caps.PerTransfer <= 0 || caps.DailyDeposit <= 0 || caps.Monthly <= 0 {
		return nil, errors.New("fiat handler: caps must be positive")
	}
	return &Handler{caps: caps, now: now, log: log.With("component", "fiat-applier")}, nil
}

// batch is the in-memory state of one batch.
type batch struct {
	h       *Handler
	now     time.Time
	month   string
	wallets map[string]*store.Wallet
	dirty   map[string]bool
	// fees are the fee credits of the batch by fee wallet id. schemas.TransferFee wallets
	// are only ever credited, so they are not locked with the others: one
	// additive update at the end of the batch holds their row lock only
	// until the commit, and concurrent appliers do not queue behind it.
	fees     map[string]int64
	limits   map[string]*store.Limits
	limDirty map[string]bool
	deposits map[string]*store.Deposit
	depToday map[string]int64
	payouts  map[string]*store.Payout

	txs         []store.Tx
	audit       []store.AuditRow
	newDeposits []store.Deposit
	doneDeps    []*store.Deposit
	newPayouts  []store.Payout
	decided     []*store.Payout

	commerce
	donations
	refunds
}

type decoded struct {
	transfer *schemas.FiatTransfer
	depCreat *schemas.FiatDepositCreate
	credit   *schemas.FiatDepositCredit
	withdraw *schemas.FiatWithdraw
	payReq   *schemas.FiatPayoutRequest
	decide   *schemas.FiatPayoutDecide
	charge   *schemas.FiatMerchantCharge
	reqPay   *schemas.FiatRequestPay
	donate   *schemas.CharityDonate
	refund   *schemas.FiatRefund
	review   *schemas.FiatDepositReview
	bad      error
}

func decode(c pipeline.Command) decoded {
	var d decoded
	switch c.Env.Type {
	case schemas.TypeFiatTransfer:
		d.bad = into(c.Env, &d.transfer)
	case schemas.TypeFiatDepositCreate:
		d.bad = into(c.Env, &d.depCreat)
	case schemas.TypeFiatDepositCredit:
		d.bad = into(c.Env, &d.credit)
	case schemas.TypeFiatWithdraw:
		d.bad = into(c.Env, &d.withdraw)
	case schemas.TypeFiatPayoutRequest:
		d.bad = into(c.Env, &d.payReq)
	case schemas.TypeFiatPayoutDecide:
		d.bad = into(c.Env, &d.decide)
	case schemas.TypeFiatMerchantCharge:
		d.bad = into(c.Env, &d.charge)
	case schemas.TypeFiatRequestPay:
		d.bad = into(c.Env, &d.reqPay)
	case schemas.TypeCharityDonate:
		d.bad = into(c.Env, &d.donate)
	case schemas.TypeFiatRefund:
		d.bad = into(c.Env, &d.refund)
	case schemas.TypeFiatDepositReview:
		d.bad = into(c.Env, &d.review)
	default:
		d.bad = fmt.Errorf("fiat consumer does not handle %q", c.Env.Type)
	}
	return d
}

// into decodes the command data into a new T stored at dst.
func into[T any](env schemas.Envelope, dst **T) error {
	v, err := schemas.DataAs[T](env)
	*dst = &v
	return err
}

type set map[string]struct{}

func (s set) add(v string) {
	if v != "" {
		s[v] = struct{}{}
	}
}

func (s set) list() []string {
	out := make([]string, 0, len(s))
	for v := range s {
		out = append(out, v)
	}
	return out
}

// lockSet gathers the rows a batch's commands lock (and read), by kind:
// the one place that says which rows a command needs, for Apply and Load.
type lockSet struct {
	wallets, limitUsers, deposits, payouts, depositUsers, requests, authorizations set
	charges                                                                        map[store.ChargeKey]bool
}

func newLockSet() *lockSet {
	return &lockSet{wallets: set{}, limitUsers: set{}, deposits: set{}, payouts: set{}, depositUsers: set{},
		requests: set{}, authorizations: set{}, charges: map[store.ChargeKey]bool{}}
}

// add notes the rows command d needs; an unreadable command needs none.
func (l *lockSet) add(d decoded) {
	switch {
	case d.bad != nil:
	case d.transfer != nil:
		l.wallets.add(d.transfer.FromWalletID)
		l.wallets.add(d.transfer.ToWalletID)
		l.limitUsers.add(d.transfer.FromUserID)
	case d.depCreat != nil:
		l.wallets.add(d.depCreat.WalletID)
		l.limitUsers.add(d.depCreat.UserID)
		l.depositUsers.add(d.depCreat.UserID)
	case d.credit != nil:
		l.wallets.add(d.credit.WalletID)
		l.deposits.add(d.credit.DepositID)
	case d.withdraw != nil:
		l.wallets.add(d.withdraw.WalletID)
		l.limitUsers.add(d.withdraw.UserID)
	case d.payReq != nil:
		l.wallets.add(d.payReq.WalletID)
		l.limitUsers.add(d.payReq.UserID)
	case d.decide != nil:
		l.wallets.add(d.decide.WalletID)
		l.payouts.add(d.decide.PayoutID)
	case d.charge != nil:
		l.wallets.add(d.charge.CustomerWalletID)
		l.wallets.add(d.charge.MerchantWalletID)
		l.limitUsers.add(d.charge.CustomerUserID)
		l.authorizations.add(d.charge.AuthorizationID)
		l.charges[store.ChargeKey{MerchantUserID: d.charge.MerchantUserID, PaymentRef: d.charge.PaymentRef}] = true
	case d.reqPay != nil:
		l.wallets.add(d.reqPay.PayerWalletID)
		l.wallets.add(d.reqPay.ReceiverWalletID)
		l.limitUsers.add(d.reqPay.PayerUserID)
		l.requests.add(d.reqPay.RequestID)
	case d.donate != nil:
		l.wallets.add(d.donate.WalletID)
		l.limitUsers.add(d.donate.DonorUserID)
	case d.refund != nil:
		refundLocks(d.refund, l.wallets, l.requests)
	case d.review != nil:
		l.wallets.add(d.review.WalletID)
		l.deposits.add(d.review.DepositID)
	}
}

// Apply applies the batch; see the package comment.
func (h *Handler) Apply(ctx context.Context, tx pgx.Tx, cmds []pipeline.Command) ([]pipeline.Outcome, error) {
	now := h.now().UTC().Truncate(time.Microsecond)
	ds := make([]decoded, len(cmds))
	locks := newLockSet()
	for i, c := range cmds {
		ds[i] = decode(c)
		locks.add(ds[i])
	}

	b := &batch{h: h, now: now, month: schemas.MonthKey(now), dirty: map[string]bool{}, limDirty: map[string]bool{}, fees: map[string]int64{}}
	var err error
	if b.wallets, err = store.LockWallets(ctx, tx, locks.wallets.list()); err != nil {
		return nil, err
	}
	if b.limits, err = store.LockLimits(ctx, tx, locks.limitUsers.list()); err != nil {
		return nil, err
	}
	if b.deposits, err = store.LockDeposits(ctx, tx, locks.deposits.list()); err != nil {
		return nil, err
	}
	if b.payouts, err = store.LockPayouts(ctx, tx, locks.payouts.list()); err != nil {
		return nil, err
	}
	if b.depToday, err = store.DepositedSince(ctx, tx, locks.depositUsers.list(), schemas.DayStart(now)); err != nil {
		return nil, err
	}
	if err := b.loadCommerce(ctx, tx, locks.requests.list(), locks.authorizations.list(), locks.charges); err != nil {
		return nil, err
	}
	if err := b.loadRefunds(ctx, tx, ds); err != nil {
		return nil, err
	}

	out := make([]pipeline.Outcome, len(cmds))
	for i, c := range cmds {
		d := ds[i]
		switch {
		case d.bad != nil:
			h.log.Warn("unreadable fiat command", "id", c.Env.ID, "type", c.Env.Type, "err", d.bad)
			out[i] = pipeline.Unreadable(d.bad.Error())
		case d.transfer != nil:
			out[i] = b.transfer(c.Env, d.transfer)
		case d.depCreat != nil:
			out[i] = b.depositCreate(d.depCreat)
		case d.credit != nil:
			out[i] = b.depositCredit(d.credit)
		case d.withdraw != nil:
			out[i] = b.withdraw(d.withdraw)
		case d.payReq != nil:
			out[i] = b.payoutRequest(d.payReq)
		case d.decide != nil:
			out[i] = b.payoutDecide(d.decide)
		case d.charge != nil:
			out[i] = b.merchantCharge(d.charge)
		case d.reqPay != nil:
			out[i] = b.requestPay(d.reqPay)
		case d.donate != nil:
			out[i] = b.donate(i, d.donate)
		case d.refund != nil:
			out[i] = b.refund(d.refund)
		case d.review != nil:
			out[i] = b.depositReview(d.review)
		}
	}
	if err := b.flush(ctx, tx); err != nil {
		return nil, err
	}
	return out, b.finishDonations(ctx, tx, out)
}

func (b *batch) flush(ctx context.Context, tx pgx.Tx) error {
	bal := make(map[string]int64, len(b.dirty))
	for id := range b.dirty {
		bal[id] = b.wallets[id].Balance
	}
	if err := store.WriteBalances(ctx, tx, bal); err != nil {
		return err
	}
	var lims []*store.Limits
	for id := range b.limDirty {
		lims = append(lims, b.limits[id])
	}
	if err := store.WriteMonthly(ctx, tx, lims); err != nil {
		return err
	}
	if err := store.InsertDeposits(ctx, tx, b.newDeposits); err != nil {
		return err
	}
	if err := store.CompleteDeposits(ctx, tx, b.doneDeps); err != nil {
		return err
	}
	if err := store.InsertPayouts(ctx, tx, b.newPayouts); err != nil {
		return err
	}
	if err := store.DecidePayouts(ctx, tx, b.decided); err != nil {
		return err
	}
	if err := b.flushCommerce(ctx, tx); err != nil {
		return err
	}
	if err := b.flushRefunds(ctx, tx); err != nil {
		return err
	}
	if err := store.InsertTransactions(ctx, tx, b.txs); err != nil {
		return err
	}
	if err := store.InsertAudit(ctx, tx, b.audit); err != nil {
		return err
	}
	// Last, so the fee wallets' row locks are held only until the commit.
	return store.CreditWallets(ctx, tx, b.fees)
}

// ownWallet returns the caller's wallet or a rejection: unknown or another
// user's → 404 wallet_not_found, not active → 400 wallet_inactive.
func (b *batch) ownWallet(id, userID string) (*store.Wallet, *pipeline.Outcome) {
	w := b.wallets[id]
	if w == nil || w.Kind != store.KindUser || w.UserID != userID {
		o := pipeline.Reject(http.StatusNotFound, schemas.CodeWalletNotFound, "no such wallet", nil)
		return nil, &o
	}
	if w.Status != store.StatusActive {
		o := pipeline.Reject(http.StatusBadRequest, schemas.CodeWalletInactive, "the wallet is "+w.Status, nil)
		return nil, &o
	}
	return w, nil
}

func (b *batch) limitsOf(userID string) *store.Limits {
	l := b.limits[userID]
	if l == nil {
		l = &store.Limits{UserID: userID}
		b.limits[userID] = l
	}
	if l.Month != b.month {
		l.Month, l.MonthOut = b.month, 0
	}
	return l
}

func (b *batch) move(w *store.Wallet, delta int64) {
	w.Balance += delta
	b.dirty[w.ID] = true
}

// creditFee adds a fee to the platform fee wallet of the currency.
func (b *batch) creditFee(currency string, fee int64) {
	if fee > 0 {
		b.fees[store.FeeWalletID(currency)] += fee
	}
}

func kycRejection() pipeline.Outcome {
	return pipeline.Reject(http.StatusForbidden, schemas.CodeKYCRequired,
		"this exceeds the limits for accounts without KYC; submit KYC at /api/fiat/kyc/submit", nil)
}

func (b *batch) emit(o *pipeline.Outcome, topic, typ, key, actor string, data any) {
	env, err := schemas.New(typ, key, actor, data, b.now)
	if err != nil {
		// The data types are ours and always encode.
		b.h.log.Error("encode emission", "type", typ, "err", err)
		return
	}
	o.Emit = append(o.Emit, pipeline.Emission{Topic: topic, Env: env})
}

func (b *batch) ledger(o *pipeline.Outcome, entry schemas.LedgerAppend) {
	b.emit(o, topics.LedgerAppend, schemas.TypeLedgerAppend, "", entry.ActorUserID, entry)
}

func (b *batch) reputation(o *pipeline.Outcome, userID, kind string, weight int64, sourceID string) {
	b.emit(o, topics.ReputationCommands, schemas.TypeReputationEvent, userID, userID, schemas.ReputationEvent{
		UserID: userID, Kind: kind, SourceModule: "fiat", Weight: weight, SourceID: sourceID,
	})
}

func ptr(v int64) *int64 { return &v }

func (b *batch) transfer(env schemas.Envelope, t *schemas.FiatTransfer) pipeline.Outcome {
	from, rej := b.ownWallet(t.FromWalletID, t.FromUserID)
	if rej != nil {
		return *rej
	}
	failed := func(o pipeline.Outcome, reason string) pipeline.Outcome {
		b.emit(&o, topics.EventsFiat, schemas.TypeTransferFailed, from.ID, t.FromUserID, schemas.TransferFailed{
			FromWallet: from.ID, ToWallet: t.ToWalletID, AmountKzt: t.Amount, Reason: reason, Description: t.Memo,
		})
		return o
	}
	to := b.wallets[t.ToWalletID]
	if to == nil || to.Kind != store.KindUser || to.UserID != t.ToUserID {
		return failed(pipeline.Reject(http.StatusNotFound, schemas.CodeRecipientNotFound, "the recipient has no wallet", nil), schemas.CodeRecipientNotFound)
	}
	if to.ID == from.ID || to.UserID == from.UserID {
		return pipeline.Reject(http.StatusUnprocessableEntity, schemas.CodeValidationFailed, "some fields are missing or invalid",
			map[string]any{"fields": map[string]string{"toEmail": "must not be your own account"}})
	}
	if to.Currency != from.Currency {
		return failed(pipeline.Reject(http.StatusUnprocessableEntity, schemas.CodeCurrencyMismatch, "the wallets hold different currencies", nil), schemas.CodeCurrencyMismatch)
	}
	if to.Status != store.StatusActive {
		return failed(pipeline.Reject(http.StatusBadRequest, schemas.CodeWalletInactive, "the recipient wallet is "+to.Status, nil), schemas.CodeWalletInactive)
	}
	fee := schemas.TransferFee(t.Amount)
	lim := b.limitsOf(t.FromUserID)
	if !b.h.caps.CapCheck(lim.KYCApproved, t.Amount, lim.MonthOut, true) {
		return failed(kycRejection(), schemas.CodeKYCRequired)
	}
	if from.Balance < t.Amount+fee {
		return failed(pipeline.Reject(http.StatusBadRequest, schemas.CodeInsufficientBalance,
			"the balance does not cover the amount plus the 0.1% fee",
			map[string]any{"required": t.Amount + fee, "feeKzt": fee, "balance": from.Balance}), schemas.CodeInsufficientBalance)
	}
	b.move(from, -(t.Amount + fee))
	b.move(to, t.Amount)
	b.creditFee(from.Currency, fee)
	lim.MonthOut += t.Amount
	b.limDirty[lim.UserID] = true

	txID := schemas.NewID()
	b.txs = append(b.txs, store.Tx{ID: txID, Kind: "transfer", Status: "completed", FromWallet: from.ID, ToWallet: to.ID,
		FromUser: from.UserID, ToUser: to.UserID, Amount: t.Amount, Fee: fee, Currency: from.Currency, Memo: t.Memo,
		RefID: env.ID, CreatedAt: b.now, RequestHash: env.RequestHash, FromBalance: from.Balance, ToBalance: to.Balance})
	b.audit = append(b.audit, store.AuditRow{ID: schemas.NewID(), Actor: from.UserID, Action: "transfer", Subject: txID,
		Amount: t.Amount, Currency: from.Currency, Detail: fmt.Sprintf("%s -> %s fee %d", from.ID, to.ID, fee), CreatedAt: b.now})

	o := transferReply(txID, fee, from.Balance, to.Balance, b.now) // rebuilt from the row for a replay
	b.emit(&o, topics.EventsFiat, schemas.TypeTransferCompleted, from.ID, from.UserID, schemas.TransferCompleted{
		TxID: txID, FromWallet: from.ID, ToWallet: to.ID, AmountKzt: t.Amount, FeeKzt: fee, Description: t.Memo,
	})
	b.ledger(&o, schemas.LedgerAppend{Kind: schemas.LedgerKindTransfer, SourceID: txID, ActorUserID: from.UserID,
		AmountCents: ptr(t.Amount), Currency: from.Currency,
		Meta: map[string]any{"fromWallet": from.ID, "toWallet": to.ID, "fee": fee}})
	b.reputation(&o, from.UserID, schemas.RepKindWalletActive, weightWalletActive, txID+":from")
	b.reputation(&o, to.UserID, schemas.RepKindWalletActive, weightWalletActive, txID+":to")
	o.SelfRecorded = true // the transaction row is the record: see QueueRecorded
	return o
}

func (b *batch) depositCreate(d *schemas.FiatDepositCreate) pipeline.Outcome {
	w, rej := b.ownWallet(d.WalletID, d.UserID)
	if rej != nil {
		return *rej
	}
	lim := b.limitsOf(d.UserID)
	if !b.h.caps.DepositAllowed(lim.KYCApproved, d.Amount, b.depToday[d.UserID]) {
		return pipeline.Reject(http.StatusForbidden, schemas.CodeKYCRequired,
			"this exceeds the daily deposit limit for accounts without KYC; submit KYC at /api/fiat/kyc/submit", nil)
	}
	b.depToday[d.UserID] += d.Amount
	b.newDeposits = append(b.newDeposits, store.Deposit{ID: d.DepositID, UserID: d.UserID, WalletID: w.ID,
		Amount: d.Amount, Currency: w.Currency, SessionID: d.SessionID, URL: d.URL, Status: "pending", CreatedAt: b.now})
	return pipeline.JSON(http.StatusCreated, schemas.FiatDepositResult{DepositID: d.DepositID, SessionID: d.SessionID, URL: d.URL,
		Status: "pending", WalletID: w.ID, Amount: d.Amount, Currency: w.Currency})
}

func (b *batch) depositCredit(c *schemas.FiatDepositCredit) pipeline.Outcome {
	d := b.deposits[c.DepositID]
	if d == nil || d.WalletID != c.WalletID {
		return pipeline.Reject(http.StatusNotFound, schemas.CodeDepositNotFound, "no such deposit", nil)
	}
	if d.Status != "pending" {
		// Exactly once per deposit: another event already credited it, or
		// it awaits (or had) an admin's review.
		return pipeline.JSON(http.StatusOK, schemas.FiatCreditResult{Received: true, Idempotent: true, DepositID: d.ID,
			TransactionID: d.TransactionID, LedgerEntryID: d.LedgerEntryID, Status: d.Status})
	}
	if c.Amount != d.Amount || c.Currency != d.Currency {
		return pipeline.Reject(http.StatusBadRequest, schemas.CodeAmountMismatch,
			"the paid amount or currency does not match the deposit", map[string]any{"expected": d.Amount, "currency": d.Currency})
	}
	w := b.wallets[d.WalletID]
	if w == nil {
		return pipeline.Reject(http.StatusNotFound, schemas.CodeWalletNotFound, "no such wallet", nil)
	}
	d.EventID = c.EventID
	if w.Status != store.StatusActive {
		// The money was received: a frozen wallet is a passing state, not a
		// reason to refuse (and cache the refusal). The deposit waits for a
		// fiat admin, who credits it once the wallet is active or refunds it.
		d.Status = schemas.DepositNeedsReview
		b.doneDeps = append(b.doneDeps, d)
		b.audit = append(b.audit, store.AuditRow{ID: schemas.NewID(), Actor: "processor", Action: "deposit.needs_review",
			Subject: d.ID, Amount: d.Amount, Currency: d.Currency,
			Detail: "paid deposit " + d.ID + " event " + c.EventID + ": wallet " + w.Status, CreatedAt: b.now})
		o := pipeline.JSON(http.StatusOK, schemas.FiatCreditResult{Received: true, DepositID: d.ID, Status: d.Status})
		b.emit(&o, topics.EventsFiat, schemas.TypeDepositNeedsReview, w.ID, w.UserID, schemas.DepositReviewEvent{
			DepositID: d.ID, WalletID: w.ID, EventID: c.EventID, Amount: d.Amount, Currency: d.Currency,
			Reason: "wallet " + w.Status})
		return o
	}
	return b.creditDeposit(d, w, "processor")
}

// creditDeposit credits a paid deposit to its active wallet, with the
// transaction, audit, event, ledger entry and reputation it causes.
func (b *batch) creditDeposit(d *store.Deposit, w *store.Wallet, actor string) pipeline.Outcome {
	b.move(w, d.Amount)
	txID, ledgerID := schemas.NewID(), schemas.NewID()
	at := b.now
	d.Status, d.TransactionID, d.LedgerEntryID, d.CompletedAt = "completed", txID, ledgerID, &at
	b.doneDeps = append(b.doneDeps, d)
	b.txs = append(b.txs, store.Tx{ID: txID, Kind: "deposit", Status: "completed", ToWallet: w.ID, ToUser: w.UserID,
		Amount: d.Amount, Currency: w.Currency, Memo: "card top-up", RefID: d.ID, CreatedAt: b.now})
	b.audit = append(b.audit, store.AuditRow{ID: schemas.NewID(), Actor: actor, Action: "deposit", Subject: txID,
		Amount: d.Amount, Currency: w.Currency, Detail: "deposit " + d.ID + " event " + d.EventID, CreatedAt: b.now})
	o := pipeline.JSON(http.StatusOK, schemas.FiatCreditResult{Received: true, DepositID: d.ID, TransactionID: txID,
		LedgerEntryID: ledgerID, Status: d.Status})
	b.emit(&o, topics.EventsFiat, schemas.TypeDepositCompleted, w.ID, w.UserID, schemas.DepositCompleted{
		DepositID: d.ID, WalletID: w.ID, TransactionID: txID, Amount: d.Amount, Currency: w.Currency})
	b.ledger(&o, schemas.LedgerAppend{EntryID: ledgerID, Kind: schemas.LedgerKindDeposit, SourceID: txID,
		ActorUserID: w.UserID, AmountCents: ptr(d.Amount), Currency: w.Currency,
		Meta: map[string]any{"wallet": w.ID, "depositId": d.ID, "eventId": d.EventID}})
	b.reputation(&o, w.UserID, schemas.RepKindWalletDeposit, weightWalletDeposit, txID)
	return o
}

// depositReview applies a fiat admin's decision on a deposit in
// needs_review: credit it to its (now active) wallet, or record its refund
// to the processor.
func (b *batch) depositReview(r *schemas.FiatDepositReview) pipeline.Outcome {
	d := b.deposits[r.DepositID]
	if d == nil || d.WalletID != r.WalletID {
		return pipeline.Reject(http.StatusNotFound, schemas.CodeDepositNotFound, "no such deposit", nil)
	}
	if d.Status != schemas.DepositNeedsReview {
		return pipeline.Reject(http.StatusConflict, schemas.CodeInvalidState, "the deposit is "+d.Status+", not needs_review", nil)
	}
	w := b.wallets[d.WalletID]
	if w == nil {
		return pipeline.Reject(http.StatusNotFound, schemas.CodeWalletNotFound, "no such wallet", nil)
	}
	switch r.Action {
	case schemas.ReviewCredit:
		if w.Status != store.StatusActive {
			return pipeline.Reject(http.StatusBadRequest, schemas.CodeWalletInactive, "the wallet is "+w.Status+"; unfreeze it first", nil)
		}
		return b.creditDeposit(d, w, "admin:"+r.AdminUserID)
	case schemas.ReviewRefund:
		at := b.now
		d.Status, d.CompletedAt = schemas.DepositRefunded, &at
		b.doneDeps = append(b.doneDeps, d)
		b.audit = append(b.audit, store.AuditRow{ID: schemas.NewID(), Actor: "admin:" + r.AdminUserID,
			Action: "deposit.refund", Subject: d.ID, Amount: d.Amount, Currency: d.Currency,
			Detail: "refunded to the processor: " + r.Reason, CreatedAt: b.now})
		o := pipeline.JSON(http.StatusOK, schemas.FiatCreditResult{Received: true, DepositID: d.ID, Status: d.Status})
		b.emit(&o, topics.EventsFiat, schemas.TypeDepositRefunded, w.ID, w.UserID, schemas.DepositReviewEvent{
			DepositID: d.ID, WalletID: w.ID, EventID: d.EventID, Amount: d.Amount, Currency: d.Currency, Reason: r.Reason})
		return o
	}
	return pipeline.Reject(http.StatusUnprocessableEntity, schemas.CodeValidationFailed, "unknown review action", nil)
}

// debitOwn takes amount out of the user's own active wallet for a payment
// leaving the platform (withdrawal, payout hold): ownership, the pre-KYC
// monthly cap and the balance are checked, and the month's outflow counted.
func (b *batch) debitOwn(walletID, userID string, amount int64) (*store.Wallet, *pipeline.Outcome) {
	w, rej := b.ownWallet(walletID, userID)
	if rej != nil {
		return nil, rej
	}
	lim := b.limitsOf(userID)
	if !b.h.caps.CapCheck(lim.KYCApproved, amount, lim.MonthOut, false) {
		o := kycRejection()
		return nil, &o
	}
	if w.Balance < amount {
		o := pipeline.Reject(http.StatusBadRequest, schemas.CodeInsufficientBalance, "the balance does not cover the amount",
			map[string]any{"required": amount, "balance": w.Balance})
		return nil, &o
	}
	b.move(w, -amount)
	lim.MonthOut += amount
	b.limDirty[lim.UserID] = true
	return w, nil
}

func (b *batch) withdraw(wd *schemas.FiatWithdraw) pipeline.Outcome {
	w, rej := b.debitOwn(wd.WalletID, wd.UserID, wd.Amount)
	if rej != nil {
		return *rej
	}
	txID, wdID := schemas.NewID(), wd.WithdrawalID
	if wdID == "" {
		wdID = schemas.NewID()
	}
	// The destination is sealed by the gateway: memo and audit show its hint
	// (a command from before that carries it in clear: hinted here).
	hint := wd.DestinationHint
	if hint == "" {
		hint = schemas.AccountHint(wd.Destination)
	}
	b.txs = append(b.txs, store.Tx{ID: txID, Kind: "withdrawal", Status: "completed", FromWallet: w.ID, FromUser: w.UserID,
		Amount: wd.Amount, Currency: w.Currency, Memo: hint, RefID: wdID, CreatedAt: b.now})
	b.audit = append(b.audit, store.AuditRow{ID: schemas.NewID(), Actor: w.UserID, Action: "withdrawal", Subject: txID,
		Amount: wd.Amount, Currency: w.Currency, Detail: "to " + hint, CreatedAt: b.now})
	o := pipeline.JSON(http.StatusCreated, schemas.FiatWithdrawResult{WithdrawalID: wdID, TransactionID: txID, Balance: w.Balance,
		Status: "completed", CreatedAt: b.now})
	b.ledger(&o, schemas.LedgerAppend{Kind: schemas.LedgerKindWithdrawal, SourceID: txID, ActorUserID: w.UserID,
		AmountCents: ptr(wd.Amount), Currency: w.Currency, Meta: map[string]any{"wallet": w.ID, "withdrawalId": wdID}})
	b.reputation(&o, w.UserID, schemas.RepKindWalletPayout, weightWalletPayout, txID)
	return o
}

func (b *batch) payoutRequest(p *schemas.FiatPayoutRequest) pipeline.Outcome {
	w, rej := b.debitOwn(p.WalletID, p.UserID, p.Amount)
	if rej != nil {
		return *rej
	}
	txID := schemas.NewID()
	b.txs = append(b.txs, store.Tx{ID: txID, Kind: "payout_hold", Status: "completed", FromWallet: w.ID, FromUser: w.UserID,
		Amount: p.Amount, Currency: w.Currency, Memo: "payout to " + p.BankAccountHint, RefID: p.PayoutID, CreatedAt: b.now})
	b.newPayouts = append(b.newPayouts, store.Payout{ID: p.PayoutID, UserID: p.UserID, WalletID: w.ID, Amount: p.Amount,
		Currency: w.Currency, BankAccount: p.BankAccount, Status: "pending_review", TransactionID: txID, CreatedAt: b.now})
	b.audit = append(b.audit, store.AuditRow{ID: schemas.NewID(), Actor: w.UserID, Action: "payout.hold", Subject: p.PayoutID,
		Amount: p.Amount, Currency: w.Currency, Detail: "bank account " + p.BankAccountHint, CreatedAt: b.now})
	return pipeline.JSON(http.StatusCreated, schemas.FiatPayoutResult{ID: p.PayoutID, Status: "pending_review", WalletID: w.ID,
		Amount: p.Amount, Currency: w.Currency, Balance: w.Balance, CreatedAt: b.now})
}

func (b *batch) payoutDecide(d *schemas.FiatPayoutDecide) pipeline.Outcome {
	p := b.payouts[d.PayoutID]
	if p == nil || p.WalletID != d.WalletID {
		return pipeline.Reject(http.StatusNotFound, schemas.CodePayoutNotFound, "no such payout", nil)
	}
	if p.Status != "pending_review" {
		return pipeline.Reject(http.StatusConflict, schemas.CodeInvalidState, "the payout is "+p.Status, nil)
	}
	w := b.wallets[p.WalletID]
	if w == nil {
		return pipeline.Reject(http.StatusNotFound, schemas.CodeWalletNotFound, "no such wallet", nil)
	}
	at := b.now
	p.DecidedAt = &at
	action := "payout.paid"
	if d.Approve {
		p.Status = "paid"
	} else {
		// The held funds go back, also to a frozen wallet: they were its own.
		p.Status = "rejected"
		action = "payout.rejected"
		b.move(w, p.Amount)
		b.txs = append(b.txs, store.Tx{ID: schemas.NewID(), Kind: "payout_release", Status: "completed", ToWallet: w.ID,
			ToUser: w.UserID, Amount: p.Amount, Currency: w.Currency, Memo: "payout rejected", RefID: p.ID, CreatedAt: b.now})
	}
	b.decided = append(b.decided, p)
	b.audit = append(b.audit, store.AuditRow{ID: schemas.NewID(), Actor: d.AdminID, Action: action, Subject: p.ID,
		Amount: p.Amount, Currency: p.Currency, Detail: "wallet " + w.ID, CreatedAt: b.now})
	return pipeline.JSON(http.StatusOK, schemas.FiatPayoutResult{ID: p.ID, Status: p.Status, WalletID: w.ID, Amount: p.Amount,
		Currency: p.Currency, Balance: w.Balance, CreatedAt: p.CreatedAt})
}
