package fiat_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	cfiat "github.com/fintech/platform/consumers/fiat"
	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/broker"
	"github.com/fintech/platform/topics/commandbus"
)

// fakeClock is a clock a test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// restoreRig runs the fiat group against one broker and a database that
// the test snapshots and restores, as an operator's point-in-time restore
// does: the database goes back, the command topic does not.
type restoreRig struct {
	t       *testing.T
	kafka   *broker.Embedded
	clock   *fakeClock
	pool    *pgxpool.Pool
	url     string
	bus     *commandbus.Bus
	stopRun func()
}

func newRestoreRig(t *testing.T, start time.Time) *restoreRig {
	pool, url := pgtest.NewDB(t)
	kafka, err := broker.Start(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kafka.Close)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	bus, err := commandbus.New(ctx, kafka.Addrs(), 20*time.Second, false, quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bus.Close)
	return &restoreRig{t: t, kafka: kafka, clock: &fakeClock{t: start}, pool: pool, url: url, bus: bus}
}

// run starts the fiat group on the rig's current database; cfg sets
// MaxBatch and Workers when not zero.
func (r *restoreRig) run(cfg ...pipeline.Config) {
	r.t.Helper()
	h, err := cfiat.NewHandler(caps, r.clock.now, quiet)
	if err != nil {
		r.t.Fatal(err)
	}
	c := pipeline.Config{Group: topics.GroupFiat, Topics: []string{topics.FiatCommands}, Brokers: r.kafka.Addrs()}
	if len(cfg) > 0 {
		c.MaxBatch, c.Workers = cfg[0].MaxBatch, cfg[0].Workers
	}
	runner, err := pipeline.NewRunner(c, r.pool, h, pipeline.NewMetrics(prometheus.NewRegistry()), quiet)
	if err != nil {
		r.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runner.Run(ctx) }()
	r.stopRun = func() {
		cancel()
		if err := <-done; err != nil {
			r.t.Fatal(err)
		}
	}
}

func (r *restoreRig) stop() {
	r.t.Helper()
	r.stopRun()
	r.stopRun = nil
}

// send sends cmd and waits for its answer.
func (r *restoreRig) send(cmd pipeline.Command) schemas.Reply {
	r.t.Helper()
	cmd.Env.RequestHash = "h-" + cmd.Env.ID
	rep, err := r.bus.Send(context.Background(), commandbus.Command{Topic: topics.FiatCommands, Env: cmd.Env})
	if err != nil {
		r.t.Fatalf("send %s: %v", cmd.Env.ID, err)
	}
	return rep
}

// snapshot copies the current database (a backup); the runner must be
// stopped.
func (r *restoreRig) snapshot() string {
	r.t.Helper()
	r.pool.Reset()
	return cloneDB(r.t, r.url)
}

// restore replaces the current database by a copy of snap (a
// point-in-time restore to the backup); the runner must be stopped.
func (r *restoreRig) restore(snap string) {
	r.t.Helper()
	url := cloneDB(r.t, snap)
	pool, err := postgres.Connect(context.Background(), url, 10)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(pool.Close)
	r.pool, r.url = pool, url
}

// cloneDB creates a database from the one at url as its template and
// returns its URL.
func cloneDB(t *testing.T, url string) string {
	t.Helper()
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	src := cfg.Database
	admin, err := pgx.Connect(ctx, pgtest.ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	name := fmt.Sprintf("%s_c%d", src, time.Now().UnixNano()%1_000_000_000)
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err = admin.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE "+src)
		if err == nil || time.Now().After(deadline) || !strings.Contains(err.Error(), "being accessed") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("copy database %s: %v", src, err)
	}
	t.Cleanup(func() {
		if c, err := pgx.Connect(context.Background(), pgtest.ServerURL()); err == nil {
			_, _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			_ = c.Close(context.Background())
		}
	})
	return strings.Replace(url, "/"+src, "/"+name, 1)
}

// warmUp applies transfers until the group has stored a position on every
// partition of fiat.commands (a restored database re-reads from there).
func (r *restoreRig) warmUp() {
	r.t.Helper()
	spare := fund(r.t, r.pool, "spare", 0)
	for i := 0; i < 300; i++ {
		var n int
		if err := r.pool.QueryRow(context.Background(), `SELECT count(*) FROM consumer_positions WHERE group_name = $1 AND topic = $2`,
			topics.GroupFiat, topics.FiatCommands).Scan(&n); err != nil {
			r.t.Fatal(err)
		}
		if n == 12 {
			return
		}
		user := fmt.Sprintf("w%d", i)
		w := fund(r.t, r.pool, user, 10_000)
		if rep := r.send(transferCmd(r.t, w, spare, user, "spare", 100)); rep.Status != http.StatusOK {
			r.t.Fatalf("warm-up transfer: %d %s", rep.Status, rep.Body)
		}
	}
	r.t.Fatal("the warm-up did not reach every partition")
}

// facts are what a database holds of some commands: their stored answers,
// their rows, the events they emitted, and every balance.
type facts struct {
	answers  map[string]string // command id -> status body (a resend's replayed answer)
	txs      map[string]string // command id -> the transaction row
	events   map[string]string // event id -> topic type data
	balances map[string]int64
}

func (r *restoreRig) facts(cmds []pipeline.Command) facts {
	r.t.Helper()
	ctx := context.Background()
	f := facts{answers: map[string]string{}, txs: map[string]string{}, events: map[string]string{}, balances: map[string]int64{}}
	for _, c := range cmds {
		rep := r.send(c)
		f.answers[c.Env.ID] = fmt.Sprintf("%d %s", rep.Status, rep.Body)
		var row string
		err := r.pool.QueryRow(ctx, `SELECT concat_ws(' ', id, kind, status, from_wallet, to_wallet, amount, fee, currency,
			(extract(epoch FROM created_at) * 1000000)::bigint) FROM fiat_transactions WHERE ref_id = $1`, c.Env.ID).Scan(&row)
		if err != nil && err != pgx.ErrNoRows {
			r.t.Fatal(err)
		}
		f.txs[c.Env.ID] = row
	}
	rows, err := r.pool.Query(ctx, `SELECT t, p FROM event_log, unnest(topics, payloads) AS e(t, p)`)
	if err != nil {
		r.t.Fatal(err)
	}
	for rows.Next() {
		var topic string
		var payload []byte
		if err := rows.Scan(&topic, &payload); err != nil {
			r.t.Fatal(err)
		}
		env, err := schemas.Decode(payload)
		if err != nil {
			r.t.Fatal(err)
		}
		if env.Type != schemas.TypeEventBundle {
			f.events[env.ID] = fmt.Sprintf("%s %s %s", topic, env.Type, env.Data)
			continue
		}
		inner, err := schemas.Unbundle(env)
		if err != nil {
			r.t.Fatal(err)
		}
		for _, raw := range inner {
			e, err := schemas.Decode(raw)
			if err != nil {
				r.t.Fatal(err)
			}
			f.events[e.ID] = fmt.Sprintf("%s %s %s", topic, e.Type, e.Data)
		}
	}
	if err := rows.Err(); err != nil {
		r.t.Fatal(err)
	}
	brows, err := r.pool.Query(ctx, `SELECT id, balance FROM fiat_wallets`)
	if err != nil {
		r.t.Fatal(err)
	}
	for brows.Next() {
		var id string
		var b int64
		if err := brows.Scan(&id, &b); err != nil {
			r.t.Fatal(err)
		}
		f.balances[id] = b
	}
	if err := brows.Err(); err != nil {
		r.t.Fatal(err)
	}
	return f
}

// waitReapplied waits until every command of cmds is recorded in the
// current database.
func (r *restoreRig) waitReapplied(cmds []pipeline.Command) {
	r.t.Helper()
	ids := make([]string, len(cmds))
	for i, c := range cmds {
		ids[i] = c.Env.ID
	}
	var n int
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err := r.pool.QueryRow(context.Background(), `SELECT
			(SELECT count(*) FROM processed_commands WHERE command_id = ANY($1)) +
			(SELECT count(*) FROM fiat_transactions WHERE ref_id = ANY($1) AND NOT EXISTS
				(SELECT 1 FROM processed_commands WHERE command_id = ref_id))`, ids).Scan(&n); err != nil {
			r.t.Fatal(err)
		}
		if n == len(cmds) {
			return
		}
	}
	r.t.Fatalf("after the restore, %d of the %d commands were re-applied", n, len(cmds))
}

// compare fails on every difference between what the first run and the
// re-application left.
func compareFacts(t *testing.T, cmds []pipeline.Command, first, again facts) {
	t.Helper()
	for i, c := range cmds {
		if first.answers[c.Env.ID] != again.answers[c.Env.ID] {
			t.Errorf("command %d (%s): answered %s the first time, %s after the restore", i, c.Env.ID,
				first.answers[c.Env.ID], again.answers[c.Env.ID])
		}
		if first.txs[c.Env.ID] != again.txs[c.Env.ID] {
			t.Errorf("command %d (%s): transaction %q the first time, %q after the restore", i, c.Env.ID,
				first.txs[c.Env.ID], again.txs[c.Env.ID])
		}
	}
	for id, e := range first.events {
		if again.events[id] != e {
			t.Errorf("event %s: %s the first time, %q after the restore", id, e, again.events[id])
		}
	}
	for id := range again.events {
		if _, ok := first.events[id]; !ok {
			t.Errorf("event %s %s only after the restore", id, again.events[id])
		}
	}
	for id, b := range first.balances {
		if again.balances[id] != b {
			t.Errorf("wallet %s: balance %d the first time, %d after the restore", id, b, again.balances[id])
		}
	}
}

// TestRestoreReproducesChain is issue 43's restore, from the inside: a
// backup, then transfers around a ring of ten near-empty wallets (each hop
// acknowledged before the next is sent, each wallet able to pay its hop
// only with what the hop before brought), then a point-in-time restore to
// the backup and a restart. The ring's wallets sit on different partitions
// of fiat.commands, so each partition's backlog is re-applied as a block,
// in another order than the first time: re-decided, most hops would find
// no money. Every acknowledged hop must keep its answer, row, events and
// balances.
func TestRestoreReproducesChain(t *testing.T) {
	r := newRestoreRig(t, time.Now().UTC())
	r.run()
	r.warmUp()

	const ring, rounds, amount = 10, 5, 1_000
	fee := schemas.TransferFee(amount)
	wallets := make([]string, ring)
	for i := range wallets {
		reserve := rounds * fee
		if i == 0 {
			reserve += amount
		}
		wallets[i] = fund(t, r.pool, fmt.Sprintf("c%d", i), reserve)
	}
	r.stop()
	backup := r.snapshot()

	r.run()
	var hops []pipeline.Command
	told := map[string]string{}
	for round := 0; round < rounds; round++ {
		for i := 0; i < ring; i++ {
			j := (i + 1) % ring
			cmd := transferCmd(t, wallets[i], wallets[j], fmt.Sprintf("c%d", i), fmt.Sprintf("c%d", j), amount)
			rep := r.send(cmd)
			if rep.Status != http.StatusOK {
				t.Fatalf("round %d hop c%d -> c%d: %d %s", round, i, j, rep.Status, rep.Body)
			}
			hops = append(hops, cmd)
			told[cmd.Env.ID] = fmt.Sprintf("%d %s", rep.Status, rep.Body)
			r.clock.set(r.clock.now().Add(time.Second))
		}
	}
	first := r.facts(hops)
	r.stop()
	for _, c := range hops {
		if first.answers[c.Env.ID] != told[c.Env.ID] {
			t.Fatalf("command %s: told %s, stored %s", c.Env.ID, told[c.Env.ID], first.answers[c.Env.ID])
		}
	}

	r.restore(backup)
	r.clock.set(r.clock.now().Add(time.Hour)) // the restore takes a while
	// Small polls over two workers: a hop held back waits across batches
	// and polls for a credit applied by the other worker.
	r.run(pipeline.Config{MaxBatch: 4, Workers: 2})
	r.waitReapplied(hops)
	again := r.facts(hops)
	r.stop()
	compareFacts(t, hops, first, again)
}

// limitsRow is a user's monthly outflow row.
func (r *restoreRig) limitsRow(user string) string {
	r.t.Helper()
	var row string
	if err := r.pool.QueryRow(context.Background(), `SELECT concat_ws(' ', month, month_out) FROM fiat_limits WHERE user_id = $1`,
		user).Scan(&row); err != nil {
		r.t.Fatal(err)
	}
	return row
}

// TestRestoreReproducesMonthCap: two transfers of a user without KYC near
// the monthly cap, decided at 23:59:59 on the month's last day (one fits,
// the next is refused 403 kyc_required), re-applied after a restore in the
// next month. Re-decided at the new month's clock, both would fit (its
// outflow starts at zero) and the first would count toward the new month;
// reproduced, the refusal stands and the outflow stays in the old month.
func TestRestoreReproducesMonthCap(t *testing.T) {
	monthEnd := time.Date(2026, 11, 30, 23, 59, 59, 0, time.UTC)
	r := newRestoreRig(t, monthEnd.Add(-time.Minute))
	r.run()
	r.warmUp()
	from, to := fund(t, r.pool, "mcap", 1_000_000), fund(t, r.pool, "mto", 0)
	if _, err := r.pool.Exec(context.Background(), `INSERT INTO fiat_limits (user_id, month, month_out) VALUES ('mcap', $1, $2)`,
		schemas.MonthKey(monthEnd), caps.Monthly-1_500); err != nil {
		t.Fatal(err)
	}
	r.stop()
	backup := r.snapshot()

	r.clock.set(monthEnd)
	r.run()
	cmds := []pipeline.Command{transferCmd(t, from, to, "mcap", "mto", 1_000), transferCmd(t, from, to, "mcap", "mto", 1_000)}
	for i, want := range []int{http.StatusOK, http.StatusForbidden} {
		if rep := r.send(cmds[i]); rep.Status != want {
			t.Fatalf("transfer %d at %s: %d %s, want %d", i, monthEnd, rep.Status, rep.Body, want)
		}
	}
	first := r.facts(cmds)
	firstLimits := r.limitsRow("mcap")
	r.stop()

	r.restore(backup)
	r.clock.set(monthEnd.Add(30 * time.Second)) // the next month
	r.run()
	r.waitReapplied(cmds)
	again := r.facts(cmds)
	againLimits := r.limitsRow("mcap")
	r.stop()
	compareFacts(t, cmds, first, again)
	if firstLimits != againLimits {
		t.Errorf("monthly outflow of mcap: %s the first time, %s after the restore", firstLimits, againLimits)
	}
}
