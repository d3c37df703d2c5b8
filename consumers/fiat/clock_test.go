package fiat_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	cfiat "github.com/fintech/platform/consumers/fiat"
	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres/pgtest"
)

// TestCapsUseTheClockReadAfterTheLock: a batch that queues its reads (its
// lock) just before midnight at the end of a month and decides just after
// it is dated by the clock read once the lock is held: the new month's
// outflow and the new day's deposits start from zero.
func TestCapsUseTheClockReadAfterTheLock(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	a := fund(t, pool, "ka", 10_000)
	b := fund(t, pool, "kb", 0)
	var mu sync.Mutex
	var ticks []time.Time // the clock's next readings; the last one stays
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now := ticks[0]
		if len(ticks) > 1 {
			ticks = ticks[1:]
		}
		return now
	}
	setClock := func(ts ...time.Time) { mu.Lock(); ticks = ts; mu.Unlock() }
	h, err := cfiat.NewHandler(schemas.FiatCaps{PerTransfer: 100, DailyDeposit: 300, Monthly: 150}, clock, quiet)
	if err != nil {
		t.Fatal(err)
	}
	deposit := func(amount int64) pipeline.Command {
		env, err := schemas.New(schemas.TypeFiatDepositCreate, a, "ka", schemas.FiatDepositCreate{
			DepositID: schemas.NewID(), SessionID: "cs_" + schemas.NewID(), URL: "u", WalletID: a, UserID: "ka", Amount: amount}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return pipeline.Command{Env: env}
	}
	apply := func(cmds ...pipeline.Command) []int {
		t.Helper()
		var outs []pipeline.Outcome
		if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			var err error
			outs, err = h.Apply(ctx, tx, cmds)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		st := make([]int, len(outs))
		for i, o := range outs {
			st[i] = o.Status
		}
		return st
	}
	noon := time.Date(2027, 1, 31, 12, 0, 0, 0, time.UTC)
	setClock(noon)
	if got := apply(transferCmd(t, a, b, "ka", "kb", 100), deposit(300)); got[0] != 200 || got[1] != 201 {
		t.Fatalf("January: %v, want [200 201]", got)
	}
	// Loaded (and locked) a microsecond before midnight, decided after it.
	setClock(time.Date(2027, 1, 31, 23, 59, 59, 999_999_000, time.UTC), time.Date(2027, 2, 1, 0, 0, 0, 1000, time.UTC))
	if got := apply(transferCmd(t, a, b, "ka", "kb", 100), deposit(300)); got[0] != 200 || got[1] != 201 {
		t.Fatalf("decided in February: %v, want [200 201] (January's month and day were applied)", got)
	}
	var month string
	var out int64
	if err := pool.QueryRow(ctx, `SELECT month, month_out FROM fiat_limits WHERE user_id = 'ka'`).Scan(&month, &out); err != nil {
		t.Fatal(err)
	}
	if month != "2027-02" || out != 100 {
		t.Fatalf("limits %s %d, want 2027-02 100", month, out)
	}
	// Both caps now hold for the new month and day.
	setClock(time.Date(2027, 2, 1, 8, 0, 0, 0, time.UTC))
	if got := apply(transferCmd(t, a, b, "ka", "kb", 51), deposit(1)); got[0] != 403 || got[1] != 403 {
		t.Fatalf("February: %v, want [403 403]", got)
	}
}
