package trade_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/consumers/trade"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/storage/postgres/pgtest"
	store "github.com/fintech/platform/storage/trade"
	"github.com/fintech/platform/topics"
)

type fixture struct {
	t    *testing.T
	pool *pgxpool.Pool
	h    *trade.Handler
	accs *store.Accounts
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	pool, _ := pgtest.NewDB(t)
	h, err := trade.NewHandler(store.NewStore(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, pool: pool, h: h, accs: store.NewAccounts(pool)}
}

// apply runs one batch in one committed transaction, as the runner does,
// retrying what the runner retries.
func (f *fixture) apply(envs ...schemas.Envelope) []pipeline.Outcome {
	f.t.Helper()
	out, err := f.tryApply(envs...)
	if err != nil {
		f.t.Fatalf("apply: %v", err)
	}
	return out
}

func (f *fixture) tryApply(envs ...schemas.Envelope) ([]pipeline.Outcome, error) {
	cmds := make([]pipeline.Command, len(envs))
	for i, e := range envs {
		cmds[i] = pipeline.Command{Env: e, Topic: topics.TradeCommands}
	}
	for {
		var out []pipeline.Outcome
		err := pgx.BeginFunc(context.Background(), f.pool, func(tx pgx.Tx) error {
			var err error
			out, err = f.h.Apply(context.Background(), tx, cmds)
			return err
		})
		if err != nil && postgres.IsRetriable(err) {
			continue
		}
		if err == nil && len(out) != len(envs) {
			return nil, fmt.Errorf("%d outcomes for %d commands", len(out), len(envs))
		}
		return out, err
	}
}

func (f *fixture) open(user string) store.AccountRow {
	f.t.Helper()
	a, err := f.accs.Open(context.Background(), user, schemas.NewID(), time.Now())
	if err != nil {
		f.t.Fatal(err)
	}
	return a
}

func (f *fixture) balance(id string) int64 {
	f.t.Helper()
	var n int64
	if err := f.pool.QueryRow(context.Background(), `SELECT balance FROM trade_accounts WHERE id = $1`, id).Scan(&n); err != nil {
		f.t.Fatal(err)
	}
	return n
}

func cmd(t *testing.T, typ, key, user string, data any) schemas.Envelope {
	t.Helper()
	e, err := schemas.New(typ, key, user, data, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func topUp(t *testing.T, user, acc string, units int64) schemas.Envelope {
	return cmd(t, schemas.TypeTradeTopUp, acc, user, schemas.TradeTopUp{AccountID: acc, UserID: user, Amount: schemas.TNU(units)})
}

func transfer(t *testing.T, user, from, to string, units int64) schemas.Envelope {
	return cmd(t, schemas.TypeTradeTransfer, from, user,
		schemas.TradeTransfer{From: from, To: to, UserID: user, Amount: schemas.TNU(units)})
}

func TestTopUpAndTransfer(t *testing.T) {
	f := newFixture(t)
	alice, bob := f.open("alice"), f.open("bob")
	tenth, fifth := int64(1_000_000), int64(2_000_000)

	out := f.apply(
		topUp(t, "alice", alice.ID, tenth),
		topUp(t, "alice", alice.ID, fifth),
		transfer(t, "alice", alice.ID, bob.ID, 2_500_000),
		transfer(t, "alice", alice.ID, bob.ID, 600_000), // 0.06 > 0.05 left
		topUp(t, "alice", bob.ID, 1),                    // not alice's account
		transfer(t, "bob", alice.ID, bob.ID, 1),         // not bob's account
		transfer(t, "alice", alice.ID, "nope", 1),       // unknown receiver
	)
	wantStatus := []int{200, 200, 201, 400, 404, 404, 404}
	for i, o := range out {
		if o.Status != wantStatus[i] {
			t.Fatalf("outcome %d: %d %s, want %d", i, o.Status, o.Body, wantStatus[i])
		}
	}
	// 0.1 + 0.2 is exactly 0.3, written as the JSON number 0.3.
	var top schemas.TradeTopUpResult
	if err := json.Unmarshal(out[1].Body, &top); err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(out[1].Body, &raw)
	if string(raw["balance"]) != "0.3" || top.ID != alice.ID {
		t.Fatalf("top-up answer %s", out[1].Body)
	}
	_ = json.Unmarshal(out[2].Body, &raw)
	if string(raw["amount"]) != "0.25" || string(raw["from"]) != `"`+alice.ID+`"` || string(raw["to"]) != `"`+bob.ID+`"` {
		t.Fatalf("transfer answer %s", out[2].Body)
	}
	var rej schemas.ErrorBody
	_ = json.Unmarshal(out[3].Body, &rej)
	if rej.Error != schemas.CodeInsufficientBalance {
		t.Fatalf("insufficient: %s", out[3].Body)
	}
	for _, o := range out[4:] {
		_ = json.Unmarshal(o.Body, &rej)
		if rej.Error != schemas.CodeAccountNotFound {
			t.Fatalf("not found: %s", o.Body)
		}
	}
	if a, b := f.balance(alice.ID), f.balance(bob.ID); a != 500_000 || b != 2_500_000 {
		t.Fatalf("balances %d %d", a, b)
	}
	if len(out[0].Emit) != 2 || out[0].Emit[0].Topic != topics.EventsTrade || out[0].Emit[0].Env.Type != schemas.TypeTradeTopUpCompleted ||
		out[0].Emit[1].Topic != topics.LedgerAppend {
		t.Fatalf("top-up emissions %+v", out[0].Emit)
	}
	if len(out[2].Emit) != 2 || out[2].Emit[0].Env.Type != schemas.TypeTradeTransferCompleted {
		t.Fatalf("transfer emissions %+v", out[2].Emit)
	}
	entry, err := schemas.DataAs[schemas.LedgerAppend](out[2].Emit[1].Env)
	if err != nil || entry.Kind != schemas.LedgerKindTradeTransfer || entry.Meta["amount"] != "0.25" ||
		entry.Meta["from"] != alice.ID || entry.Meta["to"] != bob.ID || entry.AmountCents != nil {
		t.Fatalf("ledger entry %+v %v", entry, err)
	}
	if len(out[3].Emit) != 0 {
		t.Fatal("a refused transfer emitted")
	}

	// Both accounts list the transfer; only alice lists her top-ups.
	ctx := context.Background()
	aliceOps, _ := f.accs.Operations(ctx, alice.ID, schemas.Position{}, 50)
	bobOps, _ := f.accs.Operations(ctx, bob.ID, schemas.Position{}, 50)
	if len(aliceOps) != 3 || len(bobOps) != 1 || bobOps[0].Kind != schemas.TradeKindTransfer {
		t.Fatalf("operations alice %+v bob %+v", aliceOps, bobOps)
	}
	if n, _ := f.accs.CountOperations(ctx, alice.ID); n != 3 {
		t.Fatalf("count = %d", n)
	}
	page, _ := f.accs.Operations(ctx, alice.ID, schemas.Position{}, 2)
	rest, _ := f.accs.Operations(ctx, alice.ID, schemas.Position{At: page[1].CreatedAt, ID: page[1].ID}, 2)
	if len(page) != 2 || len(rest) != 1 || rest[0].ID == page[0].ID || rest[0].ID == page[1].ID ||
		rest[0].CreatedAt.After(page[1].CreatedAt) {
		t.Fatalf("paging %+v %+v", page, rest)
	}
	var streamed int
	if err := f.accs.StreamOperations(ctx, alice.ID, func(store.OperationRow) error { streamed++; return nil }); err != nil || streamed != 3 {
		t.Fatalf("stream %d %v", streamed, err)
	}
	if l, err := f.accs.ByEmail(ctx, "nobody@example.com"); !store.IsNotFound(err) {
		t.Fatalf("lookup unknown: %+v %v", l, err)
	}
}

func TestInvalidCommands(t *testing.T) {
	f := newFixture(t)
	a, b := f.open("a"), f.open("b")
	out := f.apply(
		topUp(t, "a", a.ID, schemas.MaxTopUp+1),
		transfer(t, "a", a.ID, a.ID, 1),
		transfer(t, "a", a.ID, b.ID, 0),
		cmd(t, schemas.TypeMaskRevoke, a.ID, "a", map[string]string{}),
	)
	for i, o := range out {
		if o.Status != http.StatusBadRequest {
			t.Fatalf("outcome %d: %d %s", i, o.Status, o.Body)
		}
	}
	if f.balance(a.ID) != 0 {
		t.Fatal("an invalid command moved money")
	}
}

// TestConcurrentCrossPartitionTransfers applies transfers among a few
// accounts from several concurrent transactions, as consumers of different
// partitions do: every transaction locks the sender and the receiver. The
// total is conserved exactly, no balance is negative, and no deadlock
// surfaces (the runner retries 40P01, but the id-ordered locks avoid it).
func TestConcurrentCrossPartitionTransfers(t *testing.T) {
	f := newFixture(t)
	const accounts, workers, batches, perBatch = 6, 4, 15, 8
	var ids []string
	var owners []string
	for i := range accounts {
		u := fmt.Sprintf("u%d", i)
		a := f.open(u)
		f.apply(topUp(t, u, a.ID, 1_000*schemas.TNUScale))
		ids, owners = append(ids, a.ID), append(owners, u)
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for range batches {
				var envs []schemas.Envelope
				for range perBatch {
					i, j := r.IntN(accounts), r.IntN(accounts-1)
					if j >= i {
						j++
					}
					envs = append(envs, transfer(t, owners[i], ids[i], ids[j], 1+r.Int64N(50*schemas.TNUScale)))
				}
				if _, err := f.tryApply(envs...); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var total int64
	for _, id := range ids {
		b := f.balance(id)
		if b < 0 {
			t.Fatalf("negative balance %d", b)
		}
		total += b
	}
	if total != accounts*1_000*schemas.TNUScale {
		t.Fatalf("total %d, want %d", total, accounts*1_000*schemas.TNUScale)
	}
	var ops int
	_ = f.pool.QueryRow(context.Background(), `SELECT count(*) FROM trade_operations WHERE kind = 'transfer'`).Scan(&ops)
	if ops == 0 {
		t.Fatal("no transfer applied")
	}
}

// TestReappliedCommandWritesTheSameRows: a command applied again — after a
// restore, or re-read by a group that lost its offsets, with no processed
// row to answer it — mints the same operation id, ledger source and event
// ids it minted the first time, so its rows are the same ones: a second
// application in the database is refused by the operation's key instead of
// moving the balances twice.
func TestReappliedCommandWritesTheSameRows(t *testing.T) {
	f := newFixture(t)
	a, b := f.open("user-a"), f.open("user-b")
	f.apply(topUp(t, "user-a", a.ID, 100))
	tr := transfer(t, "user-a", a.ID, b.ID, 30)
	ids := func(tx pgx.Tx) []string {
		t.Helper()
		out, err := f.h.Apply(context.Background(), tx, []pipeline.Command{{Env: tr, Topic: topics.TradeCommands}})
		if err != nil {
			t.Fatal(err)
		}
		var res schemas.TradeTransferResult
		if err := json.Unmarshal(out[0].Body, &res); err != nil {
			t.Fatal(err)
		}
		got := []string{res.ID}
		for _, e := range out[0].Emit {
			got = append(got, e.Env.ID)
		}
		return got
	}
	ctx := context.Background()
	var first, second []string
	tx, err := f.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first = ids(tx)
	_ = tx.Rollback(ctx)
	if err := pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error { second = ids(tx); return nil }); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(first) != fmt.Sprint(second) {
		t.Fatalf("the re-applied transfer minted %v, the first application %v: want the same ids", second, first)
	}
	err = pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
		_, err := f.h.Apply(ctx, tx, []pipeline.Command{{Env: tr, Topic: topics.TradeCommands}})
		return err
	})
	if err == nil {
		t.Fatal("a second application of the transfer committed: want its operation's key to refuse it")
	}
	if got, want := []int64{f.balance(a.ID), f.balance(b.ID)}, []int64{70, 30}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("balances %v after applying the transfer twice, want %v (applied once)", got, want)
	}
}
