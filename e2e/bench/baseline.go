package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/ledger"
	"github.com/fintech/platform/storage/postgres/pgtest"
)

// The two baselines are the transfer written directly against the same
// Postgres server by a careful SQL author, one transaction per transfer:
//
//   - T (transfer only): lock both wallets in id order, check the balance,
//     debit amount + fee, credit the amount, insert the transaction row and
//     an appended fee row (no hot fee-wallet row).
//   - S (same work): T plus, in the same transaction, the hash-chained ledger
//     entry (salted SHA-256 over the previous head by storage/ledger's own
//     Entry.ComputeHash, the appender's rule, under the head row's lock) and
//     the two reputation updates (score upsert and event row per user).
//
// Each transaction is pipelined the way a careful author would with pgx
// batches: T takes 2 round trips (BEGIN+lock; writes+COMMIT), S takes 3
// (BEGIN+lock; writes+head lock; chain entry+reputation+COMMIT). Only
// committed transfers count.
const baselineSchema = `
CREATE TABLE bt_wallets (id bigint PRIMARY KEY, balance bigint NOT NULL CHECK (balance >= 0));
CREATE TABLE bt_transactions (id bigserial PRIMARY KEY, from_id bigint NOT NULL, to_id bigint NOT NULL,
    amount bigint NOT NULL, fee bigint NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE bt_fees (id bigserial PRIMARY KEY, tx_id bigint NOT NULL, amount bigint NOT NULL);

CREATE TABLE bs_wallets (id bigint PRIMARY KEY, balance bigint NOT NULL CHECK (balance >= 0));
-- The platform serves each side's history, so S keeps the two history indexes.
CREATE TABLE bs_transactions (id bigserial PRIMARY KEY, from_id bigint NOT NULL, to_id bigint NOT NULL,
    amount bigint NOT NULL, fee bigint NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
CREATE INDEX bs_transactions_from ON bs_transactions (from_id, id);
CREATE INDEX bs_transactions_to ON bs_transactions (to_id, id);
CREATE TABLE bs_fees (id bigserial PRIMARY KEY, tx_id bigint NOT NULL, amount bigint NOT NULL);
-- The ledger as storage/migrations/0020_ledger.sql lays it out.
CREATE TABLE bs_ledger_entries (height bigint PRIMARY KEY, id text NOT NULL, kind text NOT NULL,
    source_id text NOT NULL, actor_user_id text NOT NULL DEFAULT '', amount_cents bigint, currency text,
    meta text, ts timestamptz NOT NULL, prev_hash text NOT NULL, hash text NOT NULL);
CREATE UNIQUE INDEX bs_ledger_entries_id ON bs_ledger_entries (id);
CREATE UNIQUE INDEX bs_ledger_entries_source ON bs_ledger_entries (kind, source_id);
CREATE INDEX bs_ledger_entries_actor ON bs_ledger_entries (actor_user_id, height);
CREATE TABLE bs_ledger_head (one boolean PRIMARY KEY DEFAULT true CHECK (one), height bigint NOT NULL, hash text NOT NULL);
CREATE TABLE bs_reputation_scores (user_id text PRIMARY KEY, score bigint NOT NULL, event_count bigint NOT NULL,
    updated_at timestamptz NOT NULL);
CREATE TABLE bs_reputation_events (user_id text NOT NULL, source_id text NOT NULL, kind text NOT NULL,
    weight bigint NOT NULL, created_at timestamptz NOT NULL, PRIMARY KEY (user_id, source_id));
`

const (
	sqlLockT   = `SELECT id, balance FROM bt_wallets WHERE id = ANY($1) ORDER BY id FOR UPDATE`
	sqlDebitT  = `UPDATE bt_wallets SET balance = balance - $2 WHERE id = $1`
	sqlCreditT = `UPDATE bt_wallets SET balance = balance + $2 WHERE id = $1`
	sqlTxT     = `WITH t AS (INSERT INTO bt_transactions (from_id, to_id, amount, fee) VALUES ($1, $2, $3, $4) RETURNING id)
INSERT INTO bt_fees (tx_id, amount) SELECT id, $4 FROM t`

	sqlLockS   = `SELECT id, balance FROM bs_wallets WHERE id = ANY($1) ORDER BY id FOR UPDATE`
	sqlDebitS  = `UPDATE bs_wallets SET balance = balance - $2 WHERE id = $1`
	sqlCreditS = `UPDATE bs_wallets SET balance = balance + $2 WHERE id = $1`
	sqlTxS     = `WITH t AS (INSERT INTO bs_transactions (from_id, to_id, amount, fee) VALUES ($1, $2, $3, $4) RETURNING id)
INSERT INTO bs_fees (tx_id, amount) SELECT id, $4 FROM t RETURNING tx_id`
	sqlHeadS  = `SELECT height, hash FROM bs_ledger_head WHERE one FOR UPDATE`
	sqlEntryS = `INSERT INTO bs_ledger_entries (height, id, kind, source_id, actor_user_id, amount_cents, currency, meta, ts, prev_hash, hash)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`
	sqlSetHeadS = `UPDATE bs_ledger_head SET height = $1, hash = $2 WHERE one`
	sqlRepS     = `INSERT INTO bs_reputation_scores (user_id, score, event_count, updated_at) VALUES ($1, $2, 1, $3)
ON CONFLICT (user_id) DO UPDATE SET score = bs_reputation_scores.score + EXCLUDED.score,
    event_count = bs_reputation_scores.event_count + 1, updated_at = EXCLUDED.updated_at`
	sqlRepEventS = `INSERT INTO bs_reputation_events (user_id, source_id, kind, weight, created_at) VALUES ($1, $2, 'wallet_active', $3, $4)`
)

// baselineSalt is the ledger salt of baseline S (any value: the cost is the
// same).
const baselineSalt = "bench-ledger-salt-0123456789abcdef"

type baselineDB struct {
	pool *pgxpool.Pool
	url  string
}

// newBaselineDB makes a fresh database on the platform's Postgres server for
// both baselines.
func newBaselineDB(t pgtest.TB) (*baselineDB, error) {
	pool, url := pgtest.NewDB(t)
	if _, err := pool.Exec(context.Background(), baselineSchema); err != nil {
		return nil, fmt.Errorf("baseline schema: %w", err)
	}
	return &baselineDB{pool: pool, url: url}, nil
}

// reset empties the tables of a baseline and funds its wallets.
func (db *baselineDB) reset(ctx context.Context, kind string, o options) error {
	p := "bt_"
	tables := "bt_wallets, bt_transactions, bt_fees"
	if kind == "S" {
		p = "bs_"
		tables = "bs_wallets, bs_transactions, bs_fees, bs_ledger_entries, bs_ledger_head, bs_reputation_scores, bs_reputation_events"
	}
	if _, err := db.pool.Exec(ctx, "TRUNCATE "+tables+" RESTART IDENTITY"); err != nil {
		return err
	}
	if _, err := db.pool.Exec(ctx, `INSERT INTO `+p+`wallets SELECT g, $1 FROM generate_series(1, $2) g`, o.deposit, o.users); err != nil {
		return err
	}
	if kind == "S" {
		if _, err := db.pool.Exec(ctx, `INSERT INTO bs_ledger_head (one, height, hash) VALUES (true, 0, $1)`, ledger.GenesisPrevHash); err != nil {
			return err
		}
	}
	_, err := db.pool.Exec(ctx, "VACUUM ANALYZE "+p+"wallets")
	return err
}

// runBaseline runs baseline kind ("T" or "S") with clients concurrent
// workers for o.baselineDuration and checks its conservation.
func runBaseline(db *baselineDB, kind string, clients int, o options) (*results, error) {
	ctx := context.Background()
	if err := db.reset(ctx, kind, o); err != nil {
		return nil, fmt.Errorf("baseline %s reset: %w", kind, err)
	}
	cfg, err := pgxpool.ParseConfig(db.url)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = int32(min(clients, o.baselineConns))
	cfg.MinConns = cfg.MaxConns
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	// Open every connection and prepare before the clock starts.
	conns := make([]*pgxpool.Conn, 0, cfg.MaxConns)
	for range cfg.MaxConns {
		c, err := pool.Acquire(ctx)
		if err != nil {
			return nil, err
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Release()
	}

	var (
		mu       sync.Mutex
		res      = &results{byStatus: map[int]int64{}}
		okCount  atomic.Int64
		rejected atomic.Int64
		wg       sync.WaitGroup
		firstErr atomic.Value
	)
	cpu0 := selfCPU()
	start := time.Now()
	end := start.Add(o.baselineDuration)
	stop := progress(start, o.baselineDuration, &okCount, &rejected, "rejected", nil)
	for w := 0; w < clients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w)+1, uint64(start.UnixNano())))
			lats := make([]time.Duration, 0, 4096)
			var fees int64
			for time.Now().Before(end) {
				a := rng.Int64N(int64(o.users)) + 1
				b := rng.Int64N(int64(o.users)-1) + 1
				if b >= a {
					b++
				}
				amount := o.minAmount + rng.Int64N(o.maxAmount-o.minAmount+1)
				fee := schemas.TransferFee(amount) // the platform's 0.1% fee, rounded up
				t0 := time.Now()
				var committed bool
				var err error
				if kind == "T" {
					committed, err = transferT(ctx, pool, a, b, amount, fee)
				} else {
					committed, err = transferS(ctx, pool, a, b, amount, fee)
				}
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				if !committed {
					rejected.Add(1)
					continue
				}
				lats = append(lats, time.Since(t0))
				fees += fee
				okCount.Add(1)
			}
			mu.Lock()
			res.latencies = append(res.latencies, lats...)
			res.fees += fees
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.genCPU = selfCPU() - cpu0
	stop()
	if v := firstErr.Load(); v != nil {
		return nil, fmt.Errorf("baseline %s: %w", kind, v.(error))
	}
	res.ok = okCount.Load()
	res.conns = int(cfg.MaxConns)
	res.attempted = res.ok + rejected.Load()
	res.byStatus[200] = res.ok

	// Conservation: balances + the appended fee rows = what was funded.
	p := map[string]string{"T": "bt_", "S": "bs_"}[kind]
	var sum, feeRows, txs int64
	if err := db.pool.QueryRow(ctx, `SELECT (SELECT sum(balance) FROM `+p+`wallets), (SELECT coalesce(sum(amount), 0) FROM `+p+`fees),
		(SELECT count(*) FROM `+p+`transactions)`).Scan(&sum, &feeRows, &txs); err != nil {
		return nil, err
	}
	want := o.deposit * int64(o.users)
	res.conserved = sum+feeRows == want && feeRows == res.fees && txs == res.ok
	fmt.Printf("  conservation (%s)       balances %d + fee rows %d = %d, funded %d; fee rows = committed fees %d; %d transaction rows = %d committed: %s\n",
		kind, sum, feeRows, sum+feeRows, want, res.fees, txs, res.ok, okWord(res.conserved))
	if kind == "S" {
		var height int64
		var head string
		if err := db.pool.QueryRow(ctx, `SELECT height, hash FROM bs_ledger_head`).Scan(&height, &head); err != nil {
			return nil, err
		}
		if height != res.ok {
			res.conserved = false
		}
		fmt.Printf("  ledger chain (S)        height %d for %d committed transfers: %s\n", height, res.ok, okWord(height == res.ok))
	}
	return res, nil
}

// transferT is baseline T's transaction. It returns false, without error,
// when the balance does not cover amount + fee (rolled back).
func transferT(ctx context.Context, pool *pgxpool.Pool, from, to, amount, fee int64) (bool, error) {
	c, err := pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	defer c.Release()
	conn := c.Conn()
	ok, err := lockCheck(ctx, conn, sqlLockT, from, to, amount+fee)
	if err != nil || !ok {
		return false, rollbackOn(ctx, conn, err)
	}
	b := &pgx.Batch{}
	b.Queue(sqlDebitT, from, amount+fee)
	b.Queue(sqlCreditT, to, amount)
	b.Queue(sqlTxT, from, to, amount, fee)
	b.Queue("COMMIT")
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		return false, rollbackOn(ctx, conn, err)
	}
	return true, nil
}

// transferS is baseline S's transaction: T's writes, then the chain entry
// over the locked head and the two reputation updates, then COMMIT.
func transferS(ctx context.Context, pool *pgxpool.Pool, from, to, amount, fee int64) (bool, error) {
	c, err := pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	defer c.Release()
	conn := c.Conn()
	ok, err := lockCheck(ctx, conn, sqlLockS, from, to, amount+fee)
	if err != nil || !ok {
		return false, rollbackOn(ctx, conn, err)
	}
	b := &pgx.Batch{}
	b.Queue(sqlDebitS, from, amount+fee)
	b.Queue(sqlCreditS, to, amount)
	b.Queue(sqlTxS, from, to, amount, fee)
	b.Queue(sqlHeadS)
	br := conn.SendBatch(ctx, b)
	var txID, height int64
	var prev string
	_, err = br.Exec()
	if err == nil {
		_, err = br.Exec()
	}
	if err == nil {
		err = br.QueryRow().Scan(&txID)
	}
	if err == nil {
		err = br.QueryRow().Scan(&height, &prev)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, rollbackOn(ctx, conn, err)
	}

	now := time.Now().UTC().Truncate(time.Microsecond)
	fromUser, toUser := "user-"+strconv.FormatInt(from, 10), "user-"+strconv.FormatInt(to, 10)
	source := "tx-" + strconv.FormatInt(txID, 10)
	meta, err := ledger.Canonical(map[string]any{"fromWallet": "wallet-" + strconv.FormatInt(from, 10),
		"toWallet": "wallet-" + strconv.FormatInt(to, 10), "fee": fee})
	if err != nil {
		return false, rollbackOn(ctx, conn, err)
	}
	e := ledger.Entry{ID: "le-" + source, Height: height + 1, Kind: "transfer", ActorUserID: fromUser, SourceID: source,
		AmountCents: &amount, Currency: "KZT", Meta: meta, Timestamp: now, PrevHash: prev}
	e.Hash = e.ComputeHash(baselineSalt)

	b = &pgx.Batch{}
	b.Queue(sqlEntryS, e.Height, e.ID, e.Kind, e.SourceID, e.ActorUserID, amount, e.Currency, string(e.Meta), e.Timestamp, e.PrevHash, e.Hash)
	b.Queue(sqlSetHeadS, e.Height, e.Hash)
	u1, u2 := fromUser, toUser
	if u2 < u1 {
		u1, u2 = u2, u1
	}
	b.Queue(sqlRepS, u1, 1, now)
	b.Queue(sqlRepS, u2, 1, now)
	b.Queue(sqlRepEventS, fromUser, source+":from", 1, now)
	b.Queue(sqlRepEventS, toUser, source+":to", 1, now)
	b.Queue("COMMIT")
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		return false, rollbackOn(ctx, conn, err)
	}
	return true, nil
}

// lockCheck begins the transaction, locks both wallets in id order and
// reports whether from holds at least need.
func lockCheck(ctx context.Context, conn *pgx.Conn, lockSQL string, from, to, need int64) (bool, error) {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(lockSQL, []int64{from, to})
	br := conn.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return false, err
	}
	rows, err := br.Query()
	if err != nil {
		return false, err
	}
	var balance int64 = -1
	for rows.Next() {
		var id, bal int64
		if err := rows.Scan(&id, &bal); err != nil {
			rows.Close()
			return false, err
		}
		if id == from {
			balance = bal
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, err
	}
	if err := br.Close(); err != nil {
		return false, err
	}
	return balance >= need, nil
}

// rollbackOn ends the open transaction and passes err on.
func rollbackOn(ctx context.Context, conn *pgx.Conn, err error) error {
	if _, rerr := conn.Exec(ctx, "ROLLBACK"); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil && errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func okWord(ok bool) string {
	if ok {
		return "OK"
	}
	return "VIOLATED"
}
