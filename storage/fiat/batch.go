package fiat

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The functions of this file are the fiat consumer's batch statements: each
// runs once per batch, whatever the number of commands in it. They are
// queued on a pgx.Batch (the consumer sends its reads in one round trip and
// its writes in another); closing the batch runs them and fills the maps
// given. COPY cannot be pipelined, so rows are inserted with one INSERT …
// SELECT unnest per table.

// lockByIDs queues the lock of the rows among ids, in id order so that two
// appliers never deadlock; query selects the rows WHERE id = ANY($1) ORDER
// BY id FOR UPDATE. Closing the batch puts each row in into by its id;
// unknown ids stay absent.
func lockByIDs[R any](b *pgx.Batch, what, query string, ids []string, scan func(pgx.CollectableRow) (R, error),
	id func(*R) string, into map[string]*R) {
	if len(ids) == 0 {
		return
	}
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	b.Queue(query, sorted).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			r, err := scan(rows)
			if err != nil {
				return fmt.Errorf("scan %s: %w", what, err)
			}
			into[id(&r)] = &r
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("lock %d %s: %w", len(ids), what, err)
		}
		return nil
	})
}

// send runs in tx the statements queue puts on a batch (for the store's
// own transactions that share a consumer batch statement).
func send(ctx context.Context, tx pgx.Tx, queue func(*pgx.Batch)) error {
	b := &pgx.Batch{}
	queue(b)
	return tx.SendBatch(ctx, b).Close()
}

// col is one column of rows, for an INSERT or UPDATE from unnest arrays.
func col[R, V any](rows []R, f func(*R) V) []V {
	out := make([]V, len(rows))
	for i := range rows {
		out[i] = f(&rows[i])
	}
	return out
}

// sortedKeys returns the keys of m in order: the lock order of the rows
// they name.
func sortedKeys[V any](m map[string]V) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

const lockWalletsSQL = `SELECT ` + walletCols + ` FROM fiat_wallets WHERE id = ANY($1) ORDER BY id FOR UPDATE`

// QueueLockWallets queues the lock of the wallets among ids.
func QueueLockWallets(b *pgx.Batch, ids []string, into map[string]*Wallet) {
	lockByIDs(b, "wallets", lockWalletsSQL, ids, scanWallet, func(w *Wallet) string { return w.ID }, into)
}

const writeBalancesSQL = `
UPDATE fiat_wallets w SET balance = v.balance
FROM unnest($1::text[], $2::bigint[]) AS v(id, balance)
WHERE w.id = v.id`

// QueueWriteBalances queues the final balance of each wallet, one statement.
func QueueWriteBalances(b *pgx.Batch, balances map[string]int64) {
	if len(balances) == 0 {
		return
	}
	ids := sortedKeys(balances)
	vals := make([]int64, len(ids))
	for i, id := range ids {
		vals[i] = balances[id]
	}
	b.Queue(writeBalancesSQL, ids, vals)
}

// creditWalletCheckedSQL credits one wallet and fails in Postgres when no
// wallet matched: in a pipeline a check of the row count by the client
// would come after the COMMIT queued behind it had run. (The failing cast
// depends on n, so the planner cannot fold it into a constant and raise it
// when the wallet exists.)
const creditWalletCheckedSQL = `
WITH u AS (UPDATE fiat_wallets SET balance = balance + $2 WHERE id = $1 RETURNING id)
SELECT CASE WHEN n = 1 THEN n ELSE ('credit of wallet ' || $1 || ' matched ' || n || ' wallets')::int END
FROM (SELECT count(*)::int AS n FROM u) AS c`

// QueueCreditWallets adds deltas to wallets that were not locked before:
// the credit-only platform fee and campaign wallets. One statement per
// wallet in id order (the lock order); a wallet that does not exist fails
// the transaction, so a credit is never dropped.
func QueueCreditWallets(b *pgx.Batch, deltas map[string]int64) {
	for _, id := range sortedKeys(deltas) {
		b.Queue(creditWalletCheckedSQL, id, deltas[id])
	}
}

const lockLimitsSQL = `
SELECT user_id, kyc_approved, month, month_out
FROM fiat_limits WHERE user_id = ANY($1) ORDER BY user_id FOR UPDATE`

const ensureLimitsSQL = `
INSERT INTO fiat_limits (user_id) SELECT unnest($1::text[]) ORDER BY 1 ON CONFLICT (user_id) DO NOTHING`

func scanLimits(row pgx.CollectableRow) (Limits, error) {
	var l Limits
	err := row.Scan(&l.UserID, &l.KYCApproved, &l.Month, &l.MonthOut)
	return l, err
}

// QueueLockLimits queues the lock of the users' limit rows: into gets a
// zero state (not approved, nothing spent) for every user at once, and
// closing the batch fills in the stored ones. Rows are created first, since
// only a row can be locked: otherwise two appliers could both start from
// zero for a new user and one would overwrite the other.
func QueueLockLimits(b *pgx.Batch, userIDs []string, into map[string]*Limits) {
	if len(userIDs) == 0 {
		return
	}
	for _, id := range userIDs {
		into[id] = &Limits{UserID: id}
	}
	sorted := slices.Sorted(slices.Values(userIDs))
	b.Queue(ensureLimitsSQL, sorted)
	lockByIDs(b, "limits", lockLimitsSQL, sorted, scanLimits, func(l *Limits) string { return l.UserID }, into)
}

const upsertLimitsSQL = `
INSERT INTO fiat_limits (user_id, month, month_out)
SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
ON CONFLICT (user_id) DO UPDATE SET month = EXCLUDED.month, month_out = EXCLUDED.month_out`

// QueueWriteMonthly queues the monthly outgoing totals; it never changes
// the KYC flag, which belongs to the KYC handlers.
func QueueWriteMonthly(b *pgx.Batch, ls []*Limits) {
	if len(ls) == 0 {
		return
	}
	slices.SortFunc(ls, func(x, y *Limits) int { return strings.Compare(x.UserID, y.UserID) })
	b.Queue(upsertLimitsSQL, col(ls, func(l **Limits) string { return (*l).UserID }),
		col(ls, func(l **Limits) string { return (*l).Month }), col(ls, func(l **Limits) int64 { return (*l).MonthOut }))
}

const depositedSinceSQL = `
SELECT user_id, coalesce(sum(amount), 0)::bigint, coalesce(sum(amount) FILTER (WHERE created_at >= $3), 0)::bigint
FROM fiat_deposits
WHERE user_id = ANY($1) AND created_at >= $2 AND status <> 'failed'
GROUP BY user_id`

// QueueDepositedSince queues the sums of the deposits (pending or
// completed) the users opened since day, and since the day after, by user.
// The reads of a batch are queued before its lock is granted, and the day
// it is decided in is known only then: it is one of the two.
func QueueDepositedSince(b *pgx.Batch, userIDs []string, day time.Time, sinceDay, sinceNext map[string]int64) {
	if len(userIDs) == 0 {
		return
	}
	b.Queue(depositedSinceSQL, userIDs, day, day.AddDate(0, 0, 1)).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var id string
			var all, next int64
			if err := rows.Scan(&id, &all, &next); err != nil {
				return fmt.Errorf("scan deposit sums: %w", err)
			}
			sinceDay[id], sinceNext[id] = all, next
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read deposit sums: %w", err)
		}
		return nil
	})
}

// sums reads (id, bigint) rows into into.
func sums(rows pgx.Rows, what string, into map[string]int64) error {
	for rows.Next() {
		var id string
		var n int64
		if err := rows.Scan(&id, &n); err != nil {
			return fmt.Errorf("scan %s: %w", what, err)
		}
		into[id] = n
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read %s: %w", what, err)
	}
	return nil
}

// lockDepositsSQL reads what the processor reported paid beside the
// deposit: a mismatch keeps the deposit in review until it is refunded.
const lockDepositsSQL = `SELECT ` + depositCols + `
FROM fiat_deposits WHERE id = ANY($1) ORDER BY id FOR UPDATE`

// QueueLockDeposits queues the lock of the deposits among ids.
func QueueLockDeposits(b *pgx.Batch, ids []string, into map[string]*Deposit) {
	lockByIDs(b, "deposits", lockDepositsSQL, ids, scanDeposit, func(d *Deposit) string { return d.ID }, into)
}

const insertDepositsSQL = `
INSERT INTO fiat_deposits (id, user_id, wallet_id, amount, currency, session_id, url, status, created_at,
    event_id, paid_amount, paid_currency, payment_of)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[],
    $9::timestamptz[], $10::text[], $11::bigint[], $12::text[], $13::text[])`

// QueueInsertDeposits queues new deposit sessions, and second payments of
// deposits (PaymentOf set) with what was paid.
func QueueInsertDeposits(b *pgx.Batch, ds []Deposit) {
	if len(ds) == 0 {
		return
	}
	b.Queue(insertDepositsSQL, col(ds, func(d *Deposit) string { return d.ID }), col(ds, func(d *Deposit) string { return d.UserID }),
		col(ds, func(d *Deposit) string { return d.WalletID }), col(ds, func(d *Deposit) int64 { return d.Amount }),
		col(ds, func(d *Deposit) string { return d.Currency }), col(ds, func(d *Deposit) string { return d.SessionID }),
		col(ds, func(d *Deposit) string { return d.URL }), col(ds, func(d *Deposit) string { return d.Status }),
		col(ds, func(d *Deposit) time.Time { return d.CreatedAt }), col(ds, func(d *Deposit) string { return d.EventID }),
		col(ds, func(d *Deposit) *int64 {
			if d.PaidCurrency == "" {
				return nil
			}
			return &d.PaidAmount
		}),
		col(ds, func(d *Deposit) *string { return nonEmpty(d.PaidCurrency) }),
		col(ds, func(d *Deposit) *string { return nonEmpty(d.PaymentOf) }))
}

const saveDepositsSQL = `
UPDATE fiat_deposits d SET status = v.status, event_id = v.event_id, transaction_id = v.tx_id,
    ledger_entry_id = v.ledger_id, completed_at = v.at,
    paid_amount = coalesce(v.paid_amount, d.paid_amount), paid_currency = coalesce(v.paid_currency, d.paid_currency)
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::bigint[], $8::text[])
    AS v(id, event_id, tx_id, ledger_id, at, status, paid_amount, paid_currency)
WHERE d.id = v.id`

// QueueCompleteDeposits queues the outcome of deposits the batch decided:
// completed (credited), needs_review (paid but not creditable, with what
// was paid when it does not match) or refunded.
func QueueCompleteDeposits(b *pgx.Batch, ds []*Deposit) {
	if len(ds) == 0 {
		return
	}
	b.Queue(saveDepositsSQL, col(ds, func(d **Deposit) string { return (*d).ID }),
		col(ds, func(d **Deposit) string { return (*d).EventID }), col(ds, func(d **Deposit) string { return (*d).TransactionID }),
		col(ds, func(d **Deposit) string { return (*d).LedgerEntryID }), col(ds, func(d **Deposit) *time.Time { return (*d).CompletedAt }),
		col(ds, func(d **Deposit) string { return (*d).Status }), col(ds, func(d **Deposit) *int64 { return nonZero((*d).PaidAmount) }),
		col(ds, func(d **Deposit) *string { return nonEmpty((*d).PaidCurrency) }))
}

func nonZero(v int64) *int64 {
	if v == 0 {
		return nil
	}
	return &v
}

func nonEmpty(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

const lockPayoutsSQL = `SELECT ` + payoutCols + ` FROM fiat_payouts WHERE id = ANY($1) ORDER BY id FOR UPDATE`

// QueueLockPayouts queues the lock of the payouts among ids.
func QueueLockPayouts(b *pgx.Batch, ids []string, into map[string]*Payout) {
	lockByIDs(b, "payouts", lockPayoutsSQL, ids, scanPayout, func(p *Payout) string { return p.ID }, into)
}

const insertPayoutsSQL = `
INSERT INTO fiat_payouts (id, user_id, wallet_id, amount, currency, bank_account, status, transaction_id, created_at)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[],
    $9::timestamptz[])`

// QueueInsertPayouts queues new payout requests.
func QueueInsertPayouts(b *pgx.Batch, ps []Payout) {
	if len(ps) == 0 {
		return
	}
	b.Queue(insertPayoutsSQL, col(ps, func(p *Payout) string { return p.ID }), col(ps, func(p *Payout) string { return p.UserID }),
		col(ps, func(p *Payout) string { return p.WalletID }), col(ps, func(p *Payout) int64 { return p.Amount }),
		col(ps, func(p *Payout) string { return p.Currency }), col(ps, func(p *Payout) string { return p.BankAccount }),
		col(ps, func(p *Payout) string { return p.Status }), col(ps, func(p *Payout) string { return p.TransactionID }),
		col(ps, func(p *Payout) time.Time { return p.CreatedAt }))
}

const decidePayoutsSQL = `
UPDATE fiat_payouts p SET status = v.status, decided_at = v.at
FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS v(id, status, at)
WHERE p.id = v.id`

// QueueDecidePayouts queues the new status of reviewed payouts.
func QueueDecidePayouts(b *pgx.Batch, ps []*Payout) {
	if len(ps) == 0 {
		return
	}
	b.Queue(decidePayoutsSQL, col(ps, func(p **Payout) string { return (*p).ID }),
		col(ps, func(p **Payout) string { return (*p).Status }), col(ps, func(p **Payout) *time.Time { return (*p).DecidedAt }))
}

// InsertAudit inserts audit rows in tx (the store's own writes use the
// consumer's statement).
func InsertAudit(ctx context.Context, tx pgx.Tx, rows []AuditRow) error {
	if err := send(ctx, tx, func(b *pgx.Batch) { QueueInsertAudit(b, rows) }); err != nil {
		return fmt.Errorf("insert %d audit rows: %w", len(rows), err)
	}
	return nil
}

const insertTransactionsSQL = `
INSERT INTO fiat_transactions (id, kind, status, from_wallet, to_wallet, from_user, to_user,
    amount, fee, currency, memo, ref_id, created_at, request_hash, from_balance, to_balance)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
    $8::bigint[], $9::bigint[], $10::text[], $11::text[], $12::text[], $13::timestamptz[],
    $14::text[], $15::bigint[], $16::bigint[])`

// QueueInsertTransactions queues the insert of transaction rows. It fills
// the sixteen columns in one pass over the rows: it runs for every batch
// of the money path.
func QueueInsertTransactions(b *pgx.Batch, txs []Tx) {
	if len(txs) == 0 {
		return
	}
	n := len(txs)
	ids, kinds, sts, fw, tw, fu, tu := make([]string, n), make([]string, n), make([]string, n), make([]string, n),
		make([]string, n), make([]string, n), make([]string, n)
	amts, fees := make([]int64, n), make([]int64, n)
	curs, memos, refs, ats := make([]string, n), make([]string, n), make([]string, n), make([]time.Time, n)
	hashes, fbs, tbs := make([]string, n), make([]int64, n), make([]int64, n)
	for i, t := range txs {
		ids[i], kinds[i], sts[i], fw[i], tw[i], fu[i], tu[i] = t.ID, t.Kind, t.Status, t.FromWallet, t.ToWallet, t.FromUser, t.ToUser
		amts[i], fees[i], curs[i], memos[i], refs[i], ats[i] = t.Amount, t.Fee, t.Currency, t.Memo, t.RefID, t.CreatedAt
		hashes[i], fbs[i], tbs[i] = t.RequestHash, t.FromBalance, t.ToBalance
	}
	b.Queue(insertTransactionsSQL, ids, kinds, sts, fw, tw, fu, tu, amts, fees, curs, memos, refs, ats, hashes, fbs, tbs)
}

const insertAuditSQL = `
INSERT INTO fiat_audit (id, actor, action, subject, amount, currency, detail, created_at)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::timestamptz[])`

// QueueInsertAudit queues the insert of audit rows.
func QueueInsertAudit(b *pgx.Batch, rows []AuditRow) {
	if len(rows) == 0 {
		return
	}
	n := len(rows)
	ids, actors, actions, subjects := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	amts, curs, details, ats := make([]int64, n), make([]string, n), make([]string, n), make([]time.Time, n)
	for i, a := range rows {
		ids[i], actors[i], actions[i], subjects[i] = a.ID, a.Actor, a.Action, a.Subject
		amts[i], curs[i], details[i], ats[i] = a.Amount, a.Currency, a.Detail, a.CreatedAt
	}
	b.Queue(insertAuditSQL, ids, actors, actions, subjects, amts, curs, details, ats)
}

// TransferRecordsSQL selects the committed transfers among the command ids
// $1 (text[]), as (command_id, request_hash, record): the transaction row is
// a transfer's processed-command record (ref_id is the command id, unique
// among transfers), and record is what ParseTransferRecord reads back.
const TransferRecordsSQL = `
SELECT ref_id, request_hash, concat_ws(' ', id, fee, from_balance, to_balance,
    (extract(epoch FROM created_at) * 1000000)::bigint, currency)
FROM fiat_transactions WHERE kind = 'transfer' AND ref_id <> '' AND ref_id = ANY($1)`

// TransferRecord is what a committed transfer's row keeps of its command:
// enough to rebuild the reply.
type TransferRecord struct {
	TransactionID string
	Fee           int64
	FromBalance   int64
	ToBalance     int64
	CreatedAt     time.Time
	Currency      string
}

// ParseTransferRecord reads the record column of TransferRecordsSQL.
func ParseTransferRecord(record string) (TransferRecord, error) {
	f := strings.Fields(record)
	if len(f) != 6 {
		return TransferRecord{}, fmt.Errorf("transfer record %q: want 6 fields", record)
	}
	var n [4]int64
	for i := range n {
		v, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil {
			return TransferRecord{}, fmt.Errorf("transfer record %q: %w", record, err)
		}
		n[i] = v
	}
	return TransferRecord{TransactionID: f[0], Fee: n[0], FromBalance: n[1], ToBalance: n[2],
		CreatedAt: time.UnixMicro(n[3]).UTC(), Currency: f[5]}, nil
}
