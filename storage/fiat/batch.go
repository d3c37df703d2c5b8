package fiat

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/storage/postgres"
)

// The functions of this file are the consumer's batch statements: each runs
// once per batch, whatever the number of commands in it.

const lockWalletsSQL = `
SELECT id, user_id, currency, balance, status, kind, created_at
FROM fiat_wallets WHERE id = ANY($1) ORDER BY id FOR UPDATE`

// LockWallets locks the wallets among ids in id order (so that two
// consumers never deadlock) and returns them by id. Unknown ids are absent.
func LockWallets(ctx context.Context, q postgres.Querier, ids []string) (map[string]*Wallet, error) {
	out := make(map[string]*Wallet, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	rows, err := q.Query(ctx, lockWalletsSQL, sorted)
	if err != nil {
		return nil, fmt.Errorf("lock %d wallets: %w", len(ids), err)
	}
	defer rows.Close()
	for rows.Next() {
		var w Wallet
		if err := rows.Scan(&w.ID, &w.UserID, &w.Currency, &w.Balance, &w.Status, &w.Kind, &w.CreatedAt); err != nil {
			return nil, fmt.Errorf("scan wallet: %w", err)
		}
		out[w.ID] = &w
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("lock %d wallets: %w", len(ids), err)
	}
	return out, nil
}

const writeBalancesSQL = `
UPDATE fiat_wallets w SET balance = v.balance
FROM unnest($1::text[], $2::bigint[]) AS v(id, balance)
WHERE w.id = v.id`

// WriteBalances writes the final balance of each wallet in one statement.
func WriteBalances(ctx context.Context, q postgres.Querier, balances map[string]int64) error {
	if len(balances) == 0 {
		return nil
	}
	ids := make([]string, 0, len(balances))
	for id := range balances {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	vals := make([]int64, len(ids))
	for i, id := range ids {
		vals[i] = balances[id]
	}
	if _, err := q.Exec(ctx, writeBalancesSQL, ids, vals); err != nil {
		return fmt.Errorf("write %d balances: %w", len(ids), err)
	}
	return nil
}

const creditWalletSQL = `UPDATE fiat_wallets SET balance = balance + $2 WHERE id = $1`

// CreditWallets adds deltas to wallets that were not locked before: the
// credit-only platform fee wallets. They are updated one by one in id order,
// so concurrent appliers take their locks in the same order. Every wallet
// must exist, or the transaction fails: a credit is never dropped.
func CreditWallets(ctx context.Context, q postgres.Querier, deltas map[string]int64) error {
	ids := make([]string, 0, len(deltas))
	for id := range deltas {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		tag, err := q.Exec(ctx, creditWalletSQL, id, deltas[id])
		if err != nil {
			return fmt.Errorf("credit wallet %s: %w", id, err)
		}
		if tag.RowsAffected() != 1 {
			return fmt.Errorf("credit wallet %s: no such wallet", id)
		}
	}
	return nil
}

const lockLimitsSQL = `
SELECT user_id, kyc_approved, month, month_out
FROM fiat_limits WHERE user_id = ANY($1) ORDER BY user_id FOR UPDATE`

const ensureLimitsSQL = `
INSERT INTO fiat_limits (user_id) SELECT unnest($1::text[]) ORDER BY 1 ON CONFLICT (user_id) DO NOTHING`

// LockLimits returns the limit state of the users, locked; users without a
// row get a zero state (not approved, nothing spent).
func LockLimits(ctx context.Context, q postgres.Querier, userIDs []string) (map[string]*Limits, error) {
	out := make(map[string]*Limits, len(userIDs))
	for _, id := range userIDs {
		out[id] = &Limits{UserID: id}
	}
	if len(userIDs) == 0 {
		return out, nil
	}
	sorted := append([]string(nil), userIDs...)
	sort.Strings(sorted)
	// Rows must exist to be locked: otherwise two consumers could both
	// start from zero for a new user and one would overwrite the other.
	if _, err := q.Exec(ctx, ensureLimitsSQL, sorted); err != nil {
		return nil, fmt.Errorf("create limits of %d users: %w", len(userIDs), err)
	}
	rows, err := q.Query(ctx, lockLimitsSQL, sorted)
	if err != nil {
		return nil, fmt.Errorf("lock limits of %d users: %w", len(userIDs), err)
	}
	defer rows.Close()
	for rows.Next() {
		var l Limits
		if err := rows.Scan(&l.UserID, &l.KYCApproved, &l.Month, &l.MonthOut); err != nil {
			return nil, fmt.Errorf("scan limits: %w", err)
		}
		out[l.UserID] = &l
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("lock limits: %w", err)
	}
	return out, nil
}

const upsertLimitsSQL = `
INSERT INTO fiat_limits (user_id, month, month_out)
SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
ON CONFLICT (user_id) DO UPDATE SET month = EXCLUDED.month, month_out = EXCLUDED.month_out`

// WriteMonthly stores the monthly outgoing totals; it never changes the KYC
// flag, which belongs to the KYC handlers.
func WriteMonthly(ctx context.Context, q postgres.Querier, ls []*Limits) error {
	if len(ls) == 0 {
		return nil
	}
	sort.Slice(ls, func(i, j int) bool { return ls[i].UserID < ls[j].UserID })
	ids, months, outs := make([]string, len(ls)), make([]string, len(ls)), make([]int64, len(ls))
	for i, l := range ls {
		ids[i], months[i], outs[i] = l.UserID, l.Month, l.MonthOut
	}
	if _, err := q.Exec(ctx, upsertLimitsSQL, ids, months, outs); err != nil {
		return fmt.Errorf("write monthly totals of %d users: %w", len(ls), err)
	}
	return nil
}

const depositedSinceSQL = `
SELECT user_id, coalesce(sum(amount), 0)::bigint FROM fiat_deposits
WHERE user_id = ANY($1) AND created_at >= $2 AND status <> 'failed'
GROUP BY user_id`

// DepositedSince sums the deposits (pending or completed) the users opened
// since t, by user.
func DepositedSince(ctx context.Context, q postgres.Querier, userIDs []string, t time.Time) (map[string]int64, error) {
	out := map[string]int64{}
	if len(userIDs) == 0 {
		return out, nil
	}
	rows, err := q.Query(ctx, depositedSinceSQL, userIDs, t)
	if err != nil {
		return nil, fmt.Errorf("sum deposits: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var n int64
		if err := rows.Scan(&id, &n); err != nil {
			return nil, fmt.Errorf("scan deposit sum: %w", err)
		}
		out[id] = n
	}
	return out, rows.Err()
}

const lockDepositsSQL = `SELECT ` + depositCols + ` FROM fiat_deposits WHERE id = ANY($1) ORDER BY id FOR UPDATE`

// LockDeposits locks the deposits among ids and returns them by id.
func LockDeposits(ctx context.Context, q postgres.Querier, ids []string) (map[string]*Deposit, error) {
	out := map[string]*Deposit{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := q.Query(ctx, lockDepositsSQL, ids)
	if err != nil {
		return nil, fmt.Errorf("lock deposits: %w", err)
	}
	ds, err := pgx.CollectRows(rows, scanDeposit)
	if err != nil {
		return nil, fmt.Errorf("lock deposits: %w", err)
	}
	for i := range ds {
		out[ds[i].ID] = &ds[i]
	}
	return out, nil
}

// InsertDeposits inserts new deposit sessions.
func InsertDeposits(ctx context.Context, q postgres.Querier, ds []Deposit) error {
	if len(ds) == 0 {
		return nil
	}
	_, err := q.CopyFrom(ctx, pgx.Identifier{"fiat_deposits"},
		[]string{"id", "user_id", "wallet_id", "amount", "currency", "session_id", "url", "status", "created_at"},
		pgx.CopyFromSlice(len(ds), func(i int) ([]any, error) {
			d := ds[i]
			return []any{d.ID, d.UserID, d.WalletID, d.Amount, d.Currency, d.SessionID, d.URL, d.Status, d.CreatedAt}, nil
		}))
	if err != nil {
		return fmt.Errorf("insert %d deposits: %w", len(ds), postgres.Translate(err))
	}
	return nil
}

const saveDepositsSQL = `
UPDATE fiat_deposits d SET status = v.status, event_id = v.event_id, transaction_id = v.tx_id,
    ledger_entry_id = v.ledger_id, completed_at = v.at
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[])
    AS v(id, event_id, tx_id, ledger_id, at, status)
WHERE d.id = v.id`

// CompleteDeposits writes the outcome of deposits the batch decided:
// completed (credited), needs_review (paid but not creditable) or refunded.
func CompleteDeposits(ctx context.Context, q postgres.Querier, ds []*Deposit) error {
	if len(ds) == 0 {
		return nil
	}
	n := len(ds)
	ids, evs, txs, leds, ats, sts := make([]string, n), make([]string, n), make([]string, n), make([]string, n),
		make([]*time.Time, n), make([]string, n)
	for i, d := range ds {
		ids[i], evs[i], txs[i], leds[i], ats[i], sts[i] = d.ID, d.EventID, d.TransactionID, d.LedgerEntryID, d.CompletedAt, d.Status
	}
	if _, err := q.Exec(ctx, saveDepositsSQL, ids, evs, txs, leds, ats, sts); err != nil {
		return fmt.Errorf("complete %d deposits: %w", n, err)
	}
	return nil
}

const lockPayoutsSQL = `SELECT ` + payoutCols + ` FROM fiat_payouts WHERE id = ANY($1) ORDER BY id FOR UPDATE`

// LockPayouts locks the payouts among ids and returns them by id.
func LockPayouts(ctx context.Context, q postgres.Querier, ids []string) (map[string]*Payout, error) {
	out := map[string]*Payout{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := q.Query(ctx, lockPayoutsSQL, ids)
	if err != nil {
		return nil, fmt.Errorf("lock payouts: %w", err)
	}
	ps, err := pgx.CollectRows(rows, scanPayout)
	if err != nil {
		return nil, fmt.Errorf("lock payouts: %w", err)
	}
	for i := range ps {
		out[ps[i].ID] = &ps[i]
	}
	return out, nil
}

// InsertPayouts inserts new payout requests.
func InsertPayouts(ctx context.Context, q postgres.Querier, ps []Payout) error {
	if len(ps) == 0 {
		return nil
	}
	_, err := q.CopyFrom(ctx, pgx.Identifier{"fiat_payouts"},
		[]string{"id", "user_id", "wallet_id", "amount", "currency", "bank_account", "status", "transaction_id", "created_at"},
		pgx.CopyFromSlice(len(ps), func(i int) ([]any, error) {
			p := ps[i]
			return []any{p.ID, p.UserID, p.WalletID, p.Amount, p.Currency, p.BankAccount, p.Status, p.TransactionID, p.CreatedAt}, nil
		}))
	if err != nil {
		return fmt.Errorf("insert %d payouts: %w", len(ps), err)
	}
	return nil
}

const decidePayoutsSQL = `
UPDATE fiat_payouts p SET status = v.status, decided_at = v.at
FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS v(id, status, at)
WHERE p.id = v.id`

// DecidePayouts stores the new status of reviewed payouts.
func DecidePayouts(ctx context.Context, q postgres.Querier, ps []*Payout) error {
	if len(ps) == 0 {
		return nil
	}
	n := len(ps)
	ids, sts, ats := make([]string, n), make([]string, n), make([]time.Time, n)
	for i, p := range ps {
		ids[i], sts[i], ats[i] = p.ID, p.Status, *p.DecidedAt
	}
	if _, err := q.Exec(ctx, decidePayoutsSQL, ids, sts, ats); err != nil {
		return fmt.Errorf("decide %d payouts: %w", n, err)
	}
	return nil
}

// InsertTransactions appends transaction rows with COPY.
func InsertTransactions(ctx context.Context, q postgres.Querier, txs []Tx) error {
	if len(txs) == 0 {
		return nil
	}
	_, err := q.CopyFrom(ctx, pgx.Identifier{"fiat_transactions"},
		[]string{"id", "kind", "status", "from_wallet", "to_wallet", "from_user", "to_user",
			"amount", "fee", "currency", "memo", "ref_id", "created_at", "request_hash", "from_balance", "to_balance"},
		pgx.CopyFromSlice(len(txs), func(i int) ([]any, error) {
			t := txs[i]
			return []any{t.ID, t.Kind, t.Status, t.FromWallet, t.ToWallet, t.FromUser, t.ToUser,
				t.Amount, t.Fee, t.Currency, t.Memo, t.RefID, t.CreatedAt, t.RequestHash, t.FromBalance, t.ToBalance}, nil
		}))
	if err != nil {
		return fmt.Errorf("insert %d transactions: %w", len(txs), err)
	}
	return nil
}

// InsertAudit appends audit rows with COPY.
func InsertAudit(ctx context.Context, q postgres.Querier, rows []AuditRow) error {
	if len(rows) == 0 {
		return nil
	}
	_, err := q.CopyFrom(ctx, pgx.Identifier{"fiat_audit"},
		[]string{"id", "actor", "action", "subject", "amount", "currency", "detail", "created_at"},
		pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
			a := rows[i]
			return []any{a.ID, a.Actor, a.Action, a.Subject, a.Amount, a.Currency, a.Detail, a.CreatedAt}, nil
		}))
	if err != nil {
		return fmt.Errorf("insert %d audit rows: %w", len(rows), err)
	}
	return nil
}

// The Queue functions put the batch statements on a pgx.Batch, for a
// consumer that sends its reads in one round trip and its writes in
// another; closing the batch runs them and fills the maps given.

// QueueLockWallets queues LockWallets: closing the batch fills into.
func QueueLockWallets(b *pgx.Batch, ids []string, into map[string]*Wallet) {
	if len(ids) == 0 {
		return
	}
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	b.Queue(lockWalletsSQL, sorted).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var w Wallet
			if err := rows.Scan(&w.ID, &w.UserID, &w.Currency, &w.Balance, &w.Status, &w.Kind, &w.CreatedAt); err != nil {
				return fmt.Errorf("scan wallet: %w", err)
			}
			into[w.ID] = &w
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("lock %d wallets: %w", len(ids), err)
		}
		return nil
	})
}

// QueueLockLimits queues LockLimits: into gets a zero state for every user
// at once, and closing the batch fills in the stored ones.
func QueueLockLimits(b *pgx.Batch, userIDs []string, into map[string]*Limits) {
	for _, id := range userIDs {
		into[id] = &Limits{UserID: id}
	}
	if len(userIDs) == 0 {
		return
	}
	sorted := append([]string(nil), userIDs...)
	sort.Strings(sorted)
	b.Queue(ensureLimitsSQL, sorted)
	b.Queue(lockLimitsSQL, sorted).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var l Limits
			if err := rows.Scan(&l.UserID, &l.KYCApproved, &l.Month, &l.MonthOut); err != nil {
				return fmt.Errorf("scan limits: %w", err)
			}
			into[l.UserID] = &l
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("lock limits of %d users: %w", len(userIDs), err)
		}
		return nil
	})
}

// QueueWriteBalances queues WriteBalances.
func QueueWriteBalances(b *pgx.Batch, balances map[string]int64) {
	if len(balances) == 0 {
		return
	}
	ids := make([]string, 0, len(balances))
	for id := range balances {
		ids = append(ids, id)
	}
	sort.Strings(ids)
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

// QueueCreditWallets queues CreditWallets: one statement per wallet in id
// order (the lock order); a wallet that does not exist fails the
// transaction, so a credit is never dropped.
func QueueCreditWallets(b *pgx.Batch, deltas map[string]int64) {
	ids := make([]string, 0, len(deltas))
	for id := range deltas {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		b.Queue(creditWalletCheckedSQL, id, deltas[id])
	}
}

// QueueWriteMonthly queues WriteMonthly.
func QueueWriteMonthly(b *pgx.Batch, ls []*Limits) {
	if len(ls) == 0 {
		return
	}
	sort.Slice(ls, func(i, j int) bool { return ls[i].UserID < ls[j].UserID })
	ids, months, outs := make([]string, len(ls)), make([]string, len(ls)), make([]int64, len(ls))
	for i, l := range ls {
		ids[i], months[i], outs[i] = l.UserID, l.Month, l.MonthOut
	}
	b.Queue(upsertLimitsSQL, ids, months, outs)
}

const insertTransactionsSQL = `
INSERT INTO fiat_transactions (id, kind, status, from_wallet, to_wallet, from_user, to_user,
    amount, fee, currency, memo, ref_id, created_at, request_hash, from_balance, to_balance)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
    $8::bigint[], $9::bigint[], $10::text[], $11::text[], $12::text[], $13::timestamptz[],
    $14::text[], $15::bigint[], $16::bigint[])`

// QueueInsertTransactions queues the insert of transaction rows (one
// INSERT … SELECT unnest: COPY cannot be pipelined).
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

const transferRecordsSQL = `
SELECT ref_id, id, fee, from_balance, to_balance, created_at, request_hash
FROM fiat_transactions WHERE kind = 'transfer' AND ref_id <> '' AND ref_id = ANY($1)`

// TransferRecord is what a committed transfer's row keeps of its command:
// enough to rebuild the reply.
type TransferRecord struct {
	CommandID     string
	TransactionID string
	Fee           int64
	FromBalance   int64
	ToBalance     int64
	CreatedAt     time.Time
	RequestHash   string
}

// QueueTransferRecords queues the lookup of the committed transfers among
// the command ids; closing the batch calls found for each.
func QueueTransferRecords(b *pgx.Batch, commandIDs []string, found func(TransferRecord)) {
	if len(commandIDs) == 0 {
		return
	}
	b.Queue(transferRecordsSQL, commandIDs).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var r TransferRecord
			if err := rows.Scan(&r.CommandID, &r.TransactionID, &r.Fee, &r.FromBalance, &r.ToBalance, &r.CreatedAt, &r.RequestHash); err != nil {
				return fmt.Errorf("scan transfer record: %w", err)
			}
			r.CreatedAt = r.CreatedAt.UTC()
			found(r)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("look up transfer records: %w", err)
		}
		return nil
	})
}
