package fiat_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kgo"

	cfiat "github.com/fintech/platform/consumers/fiat"
	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/broker"
)

// roundTrips counts the round trips of every connection dialled through it:
// a round trip begins with each write that follows a read (or is the
// first), so a pipelined batch written in several chunks counts once and a
// COPY (query, wait, data, wait) counts twice.
type roundTrips struct {
	mu sync.Mutex
	n  int
}

func (r *roundTrips) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

func (r *roundTrips) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, rt: r, readLast: true}, nil
}

type countingConn struct {
	net.Conn
	rt       *roundTrips
	readLast bool
}

func (c *countingConn) Write(p []byte) (int, error) {
	if c.readLast {
		c.rt.mu.Lock()
		c.rt.n++
		c.rt.mu.Unlock()
		c.readLast = false
	}
	return c.Conn.Write(p)
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.readLast = true
	}
	return n, err
}

// startRunner runs the fiat group on brokers through pool until ctx ends;
// wait waits for it to stop and fails the test on its error.
func startRunner(t *testing.T, ctx context.Context, brokers []string, pool *pgxpool.Pool, h *cfiat.Handler) (*pipeline.Metrics, func()) {
	t.Helper()
	metrics := pipeline.NewMetrics(prometheus.NewRegistry())
	runner, err := pipeline.NewRunner(pipeline.Config{Group: topics.GroupFiat, Topics: []string{topics.FiatCommands},
		Brokers: brokers}, pool, h, metrics, quiet)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- runner.Run(ctx) }()
	return metrics, func() {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// countedPool is a one-connection pool on url whose round trips rt counts.
func countedPool(t *testing.T, url string) (*pgxpool.Pool, *roundTrips) {
	t.Helper()
	rt := &roundTrips{}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.DialFunc = rt.dial
	cfg.MaxConns = 1
	cfg.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return false }
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool, rt
}

// batchCount is how many batches the fiat group's runner has applied.
func batchCount(t *testing.T, metrics *pipeline.Metrics) uint64 {
	t.Helper()
	var m dto.Metric
	if err := metrics.BatchSize.WithLabelValues(topics.GroupFiat).(prometheus.Histogram).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}

// maxRoundTripsPerBatch is the bound of a batch of transfers: BEGIN with the
// processed-command lookup and the row locks, then the writes with the
// processed rows, the event log row and COMMIT.
const maxRoundTripsPerBatch = 3

// TestTransferBatchRoundTrips runs batches of transfers through the runner
// on a pool whose connections count their round trips to Postgres, and
// checks the bound per batch (statement preparation excluded by a warm-up).
func TestTransferBatchRoundTrips(t *testing.T) {
	pool, url := pgtest.NewDB(t)
	kafka, err := broker.Start(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer kafka.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	counted, rt := countedPool(t, url)

	const users = 20
	wallets := make([]string, users)
	names := make([]string, users)
	for i := range wallets {
		names[i] = "rt" + string(rune('a'+i))
		wallets[i] = fund(t, pool, names[i], 10_000_000)
	}
	h, err := cfiat.NewHandler(caps, time.Now, quiet)
	if err != nil {
		t.Fatal(err)
	}
	metrics, wait := startRunner(t, ctx, kafka.Addrs(), counted, h)

	cl, err := topics.NewClient(kafka.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	sent := 0
	publish := func(n int) {
		recs := make([]*kgo.Record, 0, n)
		for i := 0; i < n; i++ {
			k := sent + i
			from, to := k%users, (k*7+3)%users
			if from == to {
				to = (to + 1) % users
			}
			c := transferCmd(t, wallets[from], wallets[to], names[from], names[to], int64(1+k%500))
			rec, err := topics.Record(topics.FiatCommands, c.Env)
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, rec)
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		sent += n
	}
	waitApplied := func() {
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			var n int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM fiat_transactions WHERE kind = 'transfer'`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n == sent {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("%d transfers were not applied in time", sent)
	}
	batches := func() uint64 { return batchCount(t, metrics) }

	// Warm-up: the first batches prepare their statements.
	for i := 0; i < 3; i++ {
		publish(20)
		waitApplied()
	}
	rt0, b0 := rt.count(), batches()
	for i := 0; i < 5; i++ {
		publish(100)
		waitApplied()
	}
	n, nb := rt.count()-rt0, batches()-b0
	if nb == 0 {
		t.Fatal("no batch was applied")
	}
	perBatch := float64(n) / float64(nb)
	t.Logf("%d round trips over %d batches of transfers: %.2f per batch", n, nb, perBatch)
	if perBatch > maxRoundTripsPerBatch {
		t.Errorf("%.2f round trips per batch, want at most %d", perBatch, maxRoundTripsPerBatch)
	}

	// A committed transfer's record is its transaction row: no processed row.
	var processed int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM processed_commands`).Scan(&processed); err != nil {
		t.Fatal(err)
	}
	if processed != 0 {
		t.Errorf("%d processed rows for %d committed transfers, want none", processed, sent)
	}

	// Every transfer redelivered, mixed with a deposit session (every fiat
	// command takes the pipelined path): nothing applies twice.
	var balances int64
	sumBalances := func() int64 {
		var s int64
		if err := pool.QueryRow(ctx, `SELECT sum(balance)::bigint FROM fiat_wallets WHERE kind = 'user'`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	balances = sumBalances()
	fetched, err := topics.NewClient(kafka.Addrs(), kgo.ConsumeTopics(topics.FiatCommands),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer fetched.Close()
	var again []*kgo.Record
	for len(again) < sent {
		fs := fetched.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		again = append(again, fs.Records()...)
	}
	dep, err := schemas.New(schemas.TypeFiatDepositCreate, wallets[0], names[0], schemas.FiatDepositCreate{
		DepositID: schemas.NewID(), SessionID: schemas.NewID(), URL: "https://pay.example/s", WalletID: wallets[0],
		UserID: names[0], Amount: 100}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	depRec, err := topics.Record(topics.FiatCommands, dep)
	if err != nil {
		t.Fatal(err)
	}
	mixed := []*kgo.Record{depRec}
	for _, r := range again {
		mixed = append(mixed, &kgo.Record{Topic: r.Topic, Key: r.Key, Value: r.Value, Headers: r.Headers})
	}
	if err := cl.ProduceSync(ctx, mixed...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM fiat_deposits`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 && groupLag(t, cl) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the redelivered batch was not consumed in time")
		}
		time.Sleep(20 * time.Millisecond)
	}
	var txs int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM fiat_transactions WHERE kind = 'transfer'`).Scan(&txs); err != nil {
		t.Fatal(err)
	}
	if txs != sent || sumBalances() != balances {
		t.Fatalf("redelivery applied again: %d transfers for %d sent, user balances %d -> %d", txs, sent, balances, sumBalances())
	}
	cancel()
	wait()
}

// TestPipelinedWriteFailureCommitsNothing makes the last write of a
// pipelined batch fail in Postgres (the fee wallet is gone) after the
// balances and transactions were written in the same round trip: the COMMIT
// queued behind it must not run, so nothing of the batch stays, and each
// command is parked once the batch is split.
func TestPipelinedWriteFailureCommitsNothing(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	kafka, err := broker.Start(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer kafka.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, b := fund(t, pool, "pa", 1_000_000), fund(t, pool, "pb", 0)
	if _, err := pool.Exec(ctx, `DELETE FROM fiat_wallets WHERE id = $1`, "fee-KZT"); err != nil {
		t.Fatal(err)
	}
	h, err := cfiat.NewHandler(caps, time.Now, quiet)
	if err != nil {
		t.Fatal(err)
	}
	metrics, wait := startRunner(t, ctx, kafka.Addrs(), pool, h)
	cl, err := topics.NewClient(kafka.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	const n = 4
	var recs []*kgo.Record
	for i := 0; i < n; i++ {
		rec, err := topics.Record(topics.FiatCommands, transferCmd(t, a, b, "pa", "pb", 1_000).Env)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	failed := func() float64 {
		var m dto.Metric
		if err := metrics.Applied.WithLabelValues(topics.GroupFiat, "failed").Write(&m); err != nil {
			t.Fatal(err)
		}
		return m.GetCounter().GetValue()
	}
	deadline := time.Now().Add(30 * time.Second)
	for failed() < n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := failed(); got != n {
		t.Fatalf("%v commands parked, want %d", got, n)
	}
	var txs, processed int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM fiat_transactions), (SELECT count(*) FROM processed_commands)`).Scan(&txs, &processed); err != nil {
		t.Fatal(err)
	}
	if txs != 0 || processed != 0 || balance(t, pool, a) != 1_000_000 || balance(t, pool, b) != 0 {
		t.Fatalf("a failed batch left %d transactions, %d processed rows, balances %d and %d",
			txs, processed, balance(t, pool, a), balance(t, pool, b))
	}
	cancel()
	wait()
}
