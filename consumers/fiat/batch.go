package fiat

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/topics"
)

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

// wanted is what the commands of a batch asked to lock (and read) in the
// shared tables.
type wanted struct {
	wallets, limits, deposits, payouts, depositUsers, requests, auths set
	charges                                                           map[store.ChargeKey]bool
}

// batch is the in-memory state of one batch: the rows its commands locked,
// changed in memory as commands are decided and written back once.
type batch struct {
	h     *Handler
	base  time.Time // the stamp of the batch's first fresh command (Settle)
	now   time.Time
	month string
	want  wanted

	wallets  map[string]*store.Wallet
	limits   map[string]*store.Limits
	deposits map[string]*store.Deposit
	depToday map[string]int64
	payouts  map[string]*store.Payout
	requests map[string]*store.PaymentRequest
	auths    map[string]*store.Authorization
	charges  map[store.ChargeKey]*store.Charge
	parts    pipeline.Parts[*batch]

	// day is the UTC day the reads were queued in; depNextDay are the
	// deposits since the day after (see settle).
	day        time.Time
	depNextDay map[string]int64

	dirty, limDirty, reqDirty, authDirty map[string]bool
	// credits are the credits of the batch to credit-only wallets (the
	// platform fee wallets, the campaign wallets) by wallet id. They are not
	// locked with the others: one additive update each, last in the batch,
	// holds their row lock only until the commit, and concurrent appliers do
	// not queue behind it.
	credits map[string]int64
	// feeCurrency and feeWallet keep the last fee wallet id, so a batch of
	// one currency does not build the id for every command.
	feeCurrency, feeWallet string

	// cmd and cmdAt are the id and occurredAt of the command being decided,
	// minted the purposes it has minted ids for: every id a command's
	// application mints derives from them (newID), so applying it again
	// after a restore writes the same rows, ledger sources and event ids.
	cmd    string
	cmdAt  time.Time
	minted []string

	txs         []store.Tx
	audit       []store.AuditRow
	newDeposits []store.Deposit
	doneDeps    []*store.Deposit
	newPayouts  []store.Payout
	decided     []*store.Payout
	newCharges  []store.Charge
}

func newBatch(h *Handler, now time.Time) *batch {
	return &batch{h: h, now: now, month: schemas.MonthKey(now), day: schemas.DayStart(now), depNextDay: map[string]int64{},
		want: wanted{wallets: set{}, limits: set{}, deposits: set{}, payouts: set{}, depositUsers: set{}, requests: set{},
			auths: set{}, charges: map[store.ChargeKey]bool{}},
		wallets: map[string]*store.Wallet{}, limits: map[string]*store.Limits{}, deposits: map[string]*store.Deposit{},
		depToday: map[string]int64{}, payouts: map[string]*store.Payout{}, requests: map[string]*store.PaymentRequest{},
		auths: map[string]*store.Authorization{}, charges: map[store.ChargeKey]*store.Charge{}, parts: h.table.NewParts(),
		dirty: map[string]bool{}, limDirty: map[string]bool{}, reqDirty: map[string]bool{}, authDirty: map[string]bool{},
		credits: map[string]int64{}}
}

// errDayPassed makes the runner load a batch again (a transient error):
// it waited more than a day between queueing its reads and deciding.
var errDayPassed = errors.New("fiat batch: more than a day passed between its reads and its decision")

// settle dates the batch at now, the clock read once its locks are held:
// the month of the monthly cap and the day of the daily deposit cap are
// those of the moment the batch decides, not of the moment it queued its
// reads (an overlapped batch queues them while the one before commits, and
// any batch may wait for its locks across midnight).
func (b *batch) settle(now time.Time) error {
	b.now, b.month = now, schemas.MonthKey(now)
	switch day := schemas.DayStart(now); {
	case day.Equal(b.day):
	case day.Equal(b.day.AddDate(0, 0, 1)):
		b.day, b.depToday = day, b.depNextDay
	default:
		return errDayPassed
	}
	return nil
}

// QueueReads queues the batch's locks and reads: the shared tables in a
// fixed order, each in id order, then the parts in declaration order.
func (b *batch) QueueReads(q *pgx.Batch) {
	store.QueueLockWallets(q, b.want.wallets.list(), b.wallets)
	store.QueueLockLimits(q, b.want.limits.list(), b.limits)
	store.QueueLockDeposits(q, b.want.deposits.list(), b.deposits)
	store.QueueLockPayouts(q, b.want.payouts.list(), b.payouts)
	store.QueueDepositedSince(q, b.want.depositUsers.list(), b.day, b.depToday, b.depNextDay)
	store.QueueLockRequests(q, b.want.requests.list(), b.requests)
	store.QueueLockAuthorizations(q, b.want.auths.list(), b.auths)
	keys := make([]store.ChargeKey, 0, len(b.want.charges))
	for k := range b.want.charges {
		keys = append(keys, k)
	}
	store.QueueChargesByRef(q, keys, b.charges)
	b.parts.QueueReads(q)
}

// QueueWrites queues what the decided commands changed, one statement per
// table; last the credits of the credit-only wallets, in id order.
func (b *batch) QueueWrites(q *pgx.Batch) {
	b.now, b.month = b.base, schemas.MonthKey(b.base)
	bal := make(map[string]int64, len(b.dirty))
	for id := range b.dirty {
		bal[id] = b.wallets[id].Balance
	}
	store.QueueWriteBalances(q, bal)
	store.QueueWriteMonthly(q, dirtyRows(b.limits, b.limDirty))
	store.QueueInsertDeposits(q, b.newDeposits)
	store.QueueCompleteDeposits(q, b.doneDeps)
	store.QueueInsertPayouts(q, b.newPayouts)
	store.QueueDecidePayouts(q, b.decided)
	store.QueueSettleRequests(q, dirtyRows(b.requests, b.reqDirty))
	store.QueueWriteRemaining(q, dirtyRows(b.auths, b.authDirty))
	store.QueueInsertCharges(q, b.newCharges)
	b.parts.QueueWrites(q, b)
	store.QueueInsertTransactions(q, b.txs)
	store.QueueInsertAudit(q, b.audit)
	store.QueueCreditWallets(q, b.credits)
}

// dirtyRows returns the rows of m whose ids are in dirty.
func dirtyRows[R any](m map[string]*R, dirty map[string]bool) []*R {
	if len(dirty) == 0 {
		return nil
	}
	out := make([]*R, 0, len(dirty))
	for id := range dirty {
		out = append(out, m[id])
	}
	return out
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

// spend counts amount toward the user's outflow of the month.
func (b *batch) spend(l *store.Limits, amount int64) {
	l.MonthOut += amount
	b.limDirty[l.UserID] = true
}

func (b *batch) move(w *store.Wallet, delta int64) {
	w.Balance += delta
	b.dirty[w.ID] = true
}

// credit adds amount to a credit-only wallet at the end of the batch.
func (b *batch) credit(walletID string, amount int64) {
	if amount > 0 {
		b.credits[walletID] += amount
	}
}

// creditFee adds a fee to the platform fee wallet of the currency.
func (b *batch) creditFee(currency string, fee int64) {
	if currency != b.feeCurrency {
		b.feeCurrency, b.feeWallet = currency, store.FeeWalletID(currency)
	}
	b.credit(b.feeWallet, fee)
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
	b.spend(lim, amount)
	return w, nil
}

// deciding makes env the command whose application mints the next ids.
func (b *batch) deciding(env schemas.Envelope) {
	b.cmd, b.cmdAt, b.minted = env.ID, env.OccurredAt, b.minted[:0]
}

// Settle takes the stamps of the batch's fresh commands once its locks are
// held and dates the batch at the first (settle).
func (b *batch) Settle(fresh int) error {
	b.base = b.h.stamps(b.h.now().UTC().Truncate(time.Microsecond), fresh)
	return b.settle(b.base)
}

// Stamp: each command of the batch is stamped a microsecond after the one
// before it, so newest-first lists (created_at, then id) keep the order
// commands were applied in, within one batch too.
func (b *batch) Stamp(i int) time.Time { return b.base.Add(time.Duration(i) * time.Microsecond) }

// At dates the command being decided: a re-applied command is decided at
// its first clock, so its caps' month and createdAt are those it was
// answered with.
func (b *batch) At(now time.Time, env schemas.Envelope) {
	b.now, b.month = now, schemas.MonthKey(now)
	b.deciding(env)
}

// newID returns the id the command being decided mints for purpose,
// numbered from the second time it mints one for the same purpose.
func (b *batch) newID(purpose string) string {
	n := 0
	for _, p := range b.minted {
		if p == purpose {
			n++
		}
	}
	b.minted = append(b.minted, purpose)
	if n > 0 {
		purpose += "." + strconv.Itoa(n)
	}
	return schemas.DerivedID(b.cmd, purpose, b.cmdAt)
}

func (b *batch) emit(o *pipeline.Outcome, topic, typ, key, actor string, data any) {
	env, err := schemas.New(typ, key, actor, data, b.now)
	if err != nil {
		// The data types are ours and always encode.
		b.h.log.Error("encode emission", "type", typ, "err", err)
		return
	}
	// A derived envelope id: the event an application emits again after a
	// restore is the same event to the webhooks and the ClickHouse sink.
	env.ID = b.newID("event:" + topic + ":" + typ)
	o.Emit = append(o.Emit, pipeline.Emission{Topic: topic, Env: env})
}

func (b *batch) ledger(o *pipeline.Outcome, entry schemas.LedgerAppend) {
	b.emit(o, topics.LedgerAppend, schemas.TypeLedgerAppend, "", entry.ActorUserID, entry)
}
