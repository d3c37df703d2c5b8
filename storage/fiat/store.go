// Package fiat stores the fiat wallets module: wallets, transactions,
// deposits, payouts, KYC submissions, per-user limits and the audit log.
// Balances are written only by the batch functions of batch.go, which the
// fiat consumer calls inside its transaction; Store serves the gateway's
// reads and its non-money writes.
package fiat

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
)

// Wallet states and kinds.
const (
	StatusActive  = "active"
	StatusFrozen  = "frozen"
	StatusDeleted = "deleted"
	KindUser      = "user"
	KindFee       = "fee"
)

// FeeWalletID is the platform fee wallet of a currency (created by the
// migration).
func FeeWalletID(currency string) string { return "fee-" + currency }

// ErrInvalidState means the record is not in a state that allows the change.
var ErrInvalidState = errors.New("invalid state")

// Wallet is a wallet row.
type Wallet struct {
	ID        string
	UserID    string
	Currency  string
	Balance   int64
	Status    string
	Kind      string
	CreatedAt time.Time
}

// Tx is a transaction row.
type Tx struct {
	ID         string
	Kind       string
	Status     string
	FromWallet string
	ToWallet   string
	FromUser   string
	ToUser     string
	Amount     int64
	Fee        int64
	Currency   string
	Memo       string
	RefID      string
	CreatedAt  time.Time
	// A transfer's row is its command's record: RefID is the command id,
	// with the request hash and the balances after it (the stored reply).
	RequestHash string
	FromBalance int64
	ToBalance   int64
}

// Deposit is a checkout session and its outcome.
type Deposit struct {
	ID            string
	UserID        string
	WalletID      string
	Amount        int64
	Currency      string
	SessionID     string
	URL           string
	Status        string
	EventID       string
	TransactionID string
	LedgerEntryID string
	CreatedAt     time.Time
	CompletedAt   *time.Time
	// PaidAmount and PaidCurrency are what the processor reported paid when
	// it does not match the deposit, or for a second payment (zero
	// otherwise): a refund returns what was paid.
	PaidAmount   int64
	PaidCurrency string
	// PaymentOf is, for a second payment of a deposit that was no longer
	// pending, the deposit it paid again ("" otherwise).
	PaymentOf string
}

// Refund is what refunding the deposit returns: what the processor reported
// paid when recorded, else the deposit's amount.
func (d *Deposit) Refund() (amount int64, currency string) {
	if d.PaidCurrency != "" {
		return d.PaidAmount, d.PaidCurrency
	}
	return d.Amount, d.Currency
}

// Payout is a bank payout request.
type Payout struct {
	ID            string
	UserID        string
	WalletID      string
	Amount        int64
	Currency      string
	BankAccount   string
	Status        string
	TransactionID string
	CreatedAt     time.Time
	DecidedAt     *time.Time
}

// KYC is a KYC submission.
type KYC struct {
	ID             string
	UserID         string
	FullName       string
	DocumentType   string
	DocumentNumber string
	Country        string
	Status         string
	CreatedAt      time.Time
	DecidedAt      *time.Time
}

// Limits is the per-user limit state.
type Limits struct {
	UserID      string
	KYCApproved bool
	Month       string
	MonthOut    int64
}

// AuditRow is one append-only audit entry.
type AuditRow struct {
	ID        string
	Actor     string
	Action    string
	Subject   string
	Amount    int64
	Currency  string
	Detail    string
	CreatedAt time.Time
}

// Store serves the gateway.
type Store struct {
	pool *pgxpool.Pool
}

// NewStore builds the store.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

const walletCols = `id, user_id, currency, balance, status, kind, created_at`

func scanWallet(row pgx.CollectableRow) (Wallet, error) {
	var w Wallet
	err := row.Scan(&w.ID, &w.UserID, &w.Currency, &w.Balance, &w.Status, &w.Kind, &w.CreatedAt)
	return w, err
}

// CreateWallet inserts a wallet; a second one of the same currency for the
// user is postgres.ErrConflict.
func (s *Store) CreateWallet(ctx context.Context, w Wallet) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO fiat_wallets (id, user_id, currency, balance, status, kind, created_at)
		VALUES ($1, $2, $3, 0, 'active', 'user', $4)`, w.ID, w.UserID, w.Currency, w.CreatedAt); err != nil {
			return err
		}
		return insertWalletCreated(ctx, tx, w.ID, w.UserID, w.Currency, KindUser, w.CreatedAt)
	})
	if err != nil {
		return fmt.Errorf("create wallet: %w", postgres.Translate(err))
	}
	return nil
}

// WalletsOf lists a user's wallets in creation order.
func (s *Store) WalletsOf(ctx context.Context, userID string) ([]Wallet, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+walletCols+` FROM fiat_wallets WHERE user_id = $1 ORDER BY created_at, id`, userID)
	if err != nil {
		return nil, fmt.Errorf("list wallets: %w", err)
	}
	ws, err := pgx.CollectRows(rows, scanWallet)
	if err != nil {
		return nil, fmt.Errorf("list wallets: %w", err)
	}
	return ws, nil
}

// Wallet returns one wallet (postgres.ErrNotFound when unknown).
func (s *Store) Wallet(ctx context.Context, id string) (Wallet, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+walletCols+` FROM fiat_wallets WHERE id = $1`, id)
	if err != nil {
		return Wallet{}, fmt.Errorf("find wallet: %w", err)
	}
	w, err := pgx.CollectExactlyOneRow(rows, scanWallet)
	if err != nil {
		return Wallet{}, fmt.Errorf("find wallet %s: %w", id, postgres.Translate(err))
	}
	return w, nil
}

// PublicWallet returns a user wallet and its owner's display name.
func (s *Store) PublicWallet(ctx context.Context, id string) (Wallet, string, error) {
	var w Wallet
	var name string
	err := s.pool.QueryRow(ctx, `SELECT w.id, w.currency, w.status, coalesce(u.name, '')
		FROM fiat_wallets w LEFT JOIN users u ON u.id = w.user_id
		WHERE w.id = $1 AND w.kind = 'user'`, id).Scan(&w.ID, &w.Currency, &w.Status, &name)
	if err != nil {
		return Wallet{}, "", fmt.Errorf("find wallet %s: %w", id, postgres.Translate(err))
	}
	return w, name, nil
}

// Target is what a transfer needs to know before it is sent.
type Target struct {
	From       Wallet
	ToUserID   string // empty: no user has the e-mail
	ToWalletID string // empty: the recipient has no wallet of the currency yet
}

const targetSQL = `
SELECT w.id, w.user_id, w.currency, w.balance, w.status, w.kind, w.created_at,
       coalesce(u.id, ''), coalesce(rw.id, '')
FROM fiat_wallets w
LEFT JOIN users u ON lower(u.email) = lower($2)
LEFT JOIN fiat_wallets rw ON rw.user_id = u.id AND rw.currency = w.currency
WHERE w.id = $1`

// TransferTarget resolves, in one round trip, the source wallet, the
// recipient user of toEmail and that user's wallet of the same currency.
func (s *Store) TransferTarget(ctx context.Context, fromWalletID, toEmail string) (Target, error) {
	var t Target
	w := &t.From
	err := s.pool.QueryRow(ctx, targetSQL, fromWalletID, toEmail).Scan(&w.ID, &w.UserID, &w.Currency,
		&w.Balance, &w.Status, &w.Kind, &w.CreatedAt, &t.ToUserID, &t.ToWalletID)
	if err != nil {
		return Target{}, fmt.Errorf("resolve transfer: %w", postgres.Translate(err))
	}
	return t, nil
}

// EnsureWallet returns the user's wallet of the currency, creating it (with
// newID) when there is none.
func (s *Store) EnsureWallet(ctx context.Context, userID, currency, newID string, now time.Time) (string, error) {
	var id string
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `INSERT INTO fiat_wallets (id, user_id, currency, created_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (user_id, currency) DO NOTHING RETURNING id`, newID, userID, currency, now).Scan(&id); err != nil {
			return err
		}
		return insertWalletCreated(ctx, tx, id, userID, currency, KindUser, now)
	})
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("create recipient wallet: %w", err)
	}
	err = s.pool.QueryRow(ctx, `SELECT id FROM fiat_wallets WHERE user_id = $1 AND currency = $2`, userID, currency).Scan(&id)
	if err != nil {
		return "", fmt.Errorf("find recipient wallet: %w", err)
	}
	return id, nil
}

// SetWalletStatus changes a wallet's status and audits it in one
// transaction. A deleted wallet cannot change (ErrInvalidState).
func (s *Store) SetWalletStatus(ctx context.Context, id, status string, audit AuditRow) (Wallet, error) {
	var w Wallet
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+walletCols+` FROM fiat_wallets WHERE id = $1 AND kind = 'user' FOR UPDATE`, id)
		if err != nil {
			return err
		}
		w, err = pgx.CollectExactlyOneRow(rows, scanWallet)
		if err != nil {
			return postgres.Translate(err)
		}
		if w.Status == StatusDeleted {
			return ErrInvalidState
		}
		if _, err := tx.Exec(ctx, `UPDATE fiat_wallets SET status = $2 WHERE id = $1`, id, status); err != nil {
			return err
		}
		w.Status = status
		return InsertAudit(ctx, tx, []AuditRow{audit})
	})
	if err != nil {
		return Wallet{}, fmt.Errorf("set wallet %s %s: %w", id, status, err)
	}
	return w, nil
}

// ActiveWallets counts active user wallets.
func (s *Store) ActiveWallets(ctx context.Context) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM fiat_wallets WHERE status = 'active' AND kind = 'user'`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count wallets: %w", err)
	}
	return n, nil
}

const depositCols = `id, user_id, wallet_id, amount, currency, session_id, url, status, event_id,
	transaction_id, ledger_entry_id, created_at, completed_at,
	coalesce(paid_amount, 0), coalesce(paid_currency, ''), coalesce(payment_of, '')`

func scanDeposit(row pgx.CollectableRow) (Deposit, error) {
	var d Deposit
	err := row.Scan(&d.ID, &d.UserID, &d.WalletID, &d.Amount, &d.Currency, &d.SessionID, &d.URL, &d.Status,
		&d.EventID, &d.TransactionID, &d.LedgerEntryID, &d.CreatedAt, &d.CompletedAt,
		&d.PaidAmount, &d.PaidCurrency, &d.PaymentOf)
	return d, err
}

func (s *Store) oneDeposit(ctx context.Context, where string, arg string) (Deposit, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+depositCols+` FROM fiat_deposits WHERE `+where, arg)
	if err != nil {
		return Deposit{}, fmt.Errorf("find deposit: %w", err)
	}
	d, err := pgx.CollectExactlyOneRow(rows, scanDeposit)
	if err != nil {
		return Deposit{}, fmt.Errorf("find deposit: %w", postgres.Translate(err))
	}
	return d, nil
}

// Deposit returns a deposit by id.
func (s *Store) Deposit(ctx context.Context, id string) (Deposit, error) {
	return s.oneDeposit(ctx, `id = $1`, id)
}

// DepositBySession returns a deposit by its checkout session id.
func (s *Store) DepositBySession(ctx context.Context, sessionID string) (Deposit, error) {
	return s.oneDeposit(ctx, `session_id = $1`, sessionID)
}

// DepositsOf lists a user's deposits, newest first (creation time, then
// id), after the cursor position.
func (s *Store) DepositsOf(ctx context.Context, userID string, before schemas.Position, limit int) ([]Deposit, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+depositCols+` FROM fiat_deposits
		WHERE user_id = $1 AND ($2 = '' OR (created_at, id) < ($4, $2)) ORDER BY created_at DESC, id DESC LIMIT $3`,
		userID, before.ID, limit, before.At)
	if err != nil {
		return nil, fmt.Errorf("list deposits: %w", err)
	}
	ds, err := pgx.CollectRows(rows, scanDeposit)
	if err != nil {
		return nil, fmt.Errorf("list deposits: %w", err)
	}
	return ds, nil
}

const payoutCols = `id, user_id, wallet_id, amount, currency, bank_account, status, transaction_id, created_at, decided_at`

func scanPayout(row pgx.CollectableRow) (Payout, error) {
	var p Payout
	err := row.Scan(&p.ID, &p.UserID, &p.WalletID, &p.Amount, &p.Currency, &p.BankAccount, &p.Status,
		&p.TransactionID, &p.CreatedAt, &p.DecidedAt)
	return p, err
}

// Payout returns a payout by id.
func (s *Store) Payout(ctx context.Context, id string) (Payout, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+payoutCols+` FROM fiat_payouts WHERE id = $1`, id)
	if err != nil {
		return Payout{}, fmt.Errorf("find payout: %w", err)
	}
	p, err := pgx.CollectExactlyOneRow(rows, scanPayout)
	if err != nil {
		return Payout{}, fmt.Errorf("find payout %s: %w", id, postgres.Translate(err))
	}
	return p, nil
}

const txCols = `id, kind, status, from_wallet, to_wallet, from_user, to_user, amount, fee, currency, memo, ref_id, created_at`

func scanTx(row pgx.CollectableRow) (Tx, error) {
	var t Tx
	err := row.Scan(&t.ID, &t.Kind, &t.Status, &t.FromWallet, &t.ToWallet, &t.FromUser, &t.ToUser,
		&t.Amount, &t.Fee, &t.Currency, &t.Memo, &t.RefID, &t.CreatedAt)
	return t, err
}

// historySQL lists a user's transactions newest first, by creation time
// (microseconds) then id: ids are ksuids, whose time part has one-second
// resolution. The two index scans are merged so that neither side is read
// past the page.
const historySQL = `
SELECT ` + txCols + ` FROM (
  (SELECT ` + txCols + ` FROM fiat_transactions WHERE from_user = $1 AND ($2 = '' OR (created_at, id) < ($4, $2))
   ORDER BY created_at DESC, id DESC LIMIT $3)
  UNION
  (SELECT ` + txCols + ` FROM fiat_transactions WHERE to_user = $1 AND ($2 = '' OR (created_at, id) < ($4, $2))
   ORDER BY created_at DESC, id DESC LIMIT $3)
) t ORDER BY created_at DESC, id DESC LIMIT $3`

// Transactions lists a user's transactions (either side), newest first,
// strictly before the cursor position (creation time, then id).
func (s *Store) Transactions(ctx context.Context, userID string, before schemas.Position, limit int) ([]Tx, error) {
	rows, err := s.pool.Query(ctx, historySQL, userID, before.ID, limit, before.At)
	if err != nil {
		return nil, fmt.Errorf("list transactions: %w", err)
	}
	txs, err := pgx.CollectRows(rows, scanTx)
	if err != nil {
		return nil, fmt.Errorf("list transactions: %w", err)
	}
	return txs, nil
}

const streamSQL = `
SELECT ` + txCols + ` FROM fiat_transactions WHERE from_user = $1
UNION ALL
SELECT ` + txCols + ` FROM fiat_transactions WHERE to_user = $1 AND from_user <> $1
ORDER BY created_at DESC, id DESC`

// StreamTransactions calls fn for each of a user's transactions, newest
// first, reading rows as they arrive instead of holding them all.
func (s *Store) StreamTransactions(ctx context.Context, userID string, fn func(Tx) error) error {
	rows, err := s.pool.Query(ctx, streamSQL, userID)
	if err != nil {
		return fmt.Errorf("stream transactions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t Tx
		if err := rows.Scan(&t.ID, &t.Kind, &t.Status, &t.FromWallet, &t.ToWallet, &t.FromUser, &t.ToUser,
			&t.Amount, &t.Fee, &t.Currency, &t.Memo, &t.RefID, &t.CreatedAt); err != nil {
			return fmt.Errorf("scan transaction: %w", err)
		}
		if err := fn(t); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("stream transactions: %w", err)
	}
	return nil
}

// CreateKYC stores a submission; an approved one lifts the user's caps in
// the same transaction.
func (s *Store) CreateKYC(ctx context.Context, k KYC, audit AuditRow) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO fiat_kyc (id, user_id, full_name, document_type, document_number, country, status, created_at, decided_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, k.ID, k.UserID, k.FullName, k.DocumentType, k.DocumentNumber,
			k.Country, k.Status, k.CreatedAt, k.DecidedAt); err != nil {
			return err
		}
		if k.Status == "approved" {
			if err := approveLimits(ctx, tx, k.UserID); err != nil {
				return err
			}
		}
		return InsertAudit(ctx, tx, []AuditRow{audit})
	})
	if err != nil {
		return fmt.Errorf("create kyc: %w", err)
	}
	return nil
}

func approveLimits(ctx context.Context, tx pgx.Tx, userID string) error {
	_, err := tx.Exec(ctx, `INSERT INTO fiat_limits (user_id, kyc_approved) VALUES ($1, true)
		ON CONFLICT (user_id) DO UPDATE SET kyc_approved = true`, userID)
	return err
}

// DecideKYC approves or rejects a pending submission (ErrInvalidState when
// it is not pending, postgres.ErrNotFound when unknown).
func (s *Store) DecideKYC(ctx context.Context, id string, approve bool, now time.Time, audit AuditRow) (KYC, error) {
	var k KYC
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT id, user_id, status, created_at FROM fiat_kyc WHERE id = $1 FOR UPDATE`, id).
			Scan(&k.ID, &k.UserID, &k.Status, &k.CreatedAt)
		if err != nil {
			return postgres.Translate(err)
		}
		if k.Status != "pending" {
			return ErrInvalidState
		}
		k.Status = "rejected"
		if approve {
			k.Status = "approved"
		}
		k.DecidedAt = &now
		if _, err := tx.Exec(ctx, `UPDATE fiat_kyc SET status = $2, decided_at = $3 WHERE id = $1`, id, k.Status, now); err != nil {
			return err
		}
		if approve {
			if err := approveLimits(ctx, tx, k.UserID); err != nil {
				return err
			}
		}
		audit.Subject = k.UserID + ":" + id
		return InsertAudit(ctx, tx, []AuditRow{audit})
	})
	if err != nil {
		return KYC{}, fmt.Errorf("decide kyc %s: %w", id, err)
	}
	return k, nil
}

// KYCStatus returns the user's approval and the status of the latest
// submission ("none" when there is none).
func (s *Store) KYCStatus(ctx context.Context, userID string) (bool, string, error) {
	var approved bool
	var latest string
	err := s.pool.QueryRow(ctx, `SELECT coalesce((SELECT kyc_approved FROM fiat_limits WHERE user_id = $1), false),
		coalesce((SELECT status FROM fiat_kyc WHERE user_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1), 'none')`, userID).Scan(&approved, &latest)
	if err != nil {
		return false, "", fmt.Errorf("kyc status: %w", err)
	}
	return approved, latest, nil
}

// Audit lists audit rows newest first (creation time, then id), strictly
// before the cursor position.
func (s *Store) Audit(ctx context.Context, before schemas.Position, limit int) ([]AuditRow, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, actor, action, subject, amount, currency, detail, created_at
		FROM fiat_audit WHERE ($1 = '' OR (created_at, id) < ($3, $1)) ORDER BY created_at DESC, id DESC LIMIT $2`,
		before.ID, limit, before.At)
	if err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (AuditRow, error) {
		var a AuditRow
		err := r.Scan(&a.ID, &a.Actor, &a.Action, &a.Subject, &a.Amount, &a.Currency, &a.Detail, &a.CreatedAt)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	return out, nil
}

// Dashboard is a user's aggregated snapshot.
type Dashboard struct {
	Wallets         []Wallet
	TxCount         int64
	SentTotal       int64
	ReceivedTotal   int64
	FeesPaid        int64
	PendingDeposits int64
	PendingPayouts  int64
	MonthOut        int64
	KYCApproved     bool
	KYCLatest       string
	RecentTxs       []Tx
}

// DashboardOf aggregates a user's wallets, transactions, deposits and payouts.
func (s *Store) DashboardOf(ctx context.Context, userID, month string) (Dashboard, error) {
	var d Dashboard
	var err error
	if d.Wallets, err = s.WalletsOf(ctx, userID); err != nil {
		return d, err
	}
	err = s.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM fiat_transactions WHERE from_user = $1 OR to_user = $1),
		(SELECT coalesce(sum(amount), 0)::bigint FROM fiat_transactions WHERE from_user = $1 AND kind = 'transfer'),
		(SELECT coalesce(sum(amount), 0)::bigint FROM fiat_transactions WHERE to_user = $1 AND kind IN ('transfer', 'deposit')),
		(SELECT coalesce(sum(fee), 0)::bigint FROM fiat_transactions WHERE from_user = $1),
		(SELECT count(*) FROM fiat_deposits WHERE user_id = $1 AND status = 'pending'),
		(SELECT count(*) FROM fiat_payouts WHERE user_id = $1 AND status = 'pending_review'),
		coalesce((SELECT month_out FROM fiat_limits WHERE user_id = $1 AND month = $2), 0)`, userID, month).
		Scan(&d.TxCount, &d.SentTotal, &d.ReceivedTotal, &d.FeesPaid, &d.PendingDeposits, &d.PendingPayouts, &d.MonthOut)
	if err != nil {
		return d, fmt.Errorf("dashboard: %w", err)
	}
	if d.KYCApproved, d.KYCLatest, err = s.KYCStatus(ctx, userID); err != nil {
		return d, err
	}
	if d.RecentTxs, err = s.Transactions(ctx, userID, schemas.Position{}, 5); err != nil {
		return d, err
	}
	return d, nil
}
