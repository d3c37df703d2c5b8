package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"

	cledger "github.com/fintech/platform/consumers/ledger"
	"github.com/fintech/platform/consumers/relay"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/ledger"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/broker"
)

// TestVerifyChecksTheDatabaseAgainstItself: a consistent database passes
// every check of `platform verify`; each corruption fails the check that
// names it, with exit code 1; what could not be checked says SKIPPED.
func TestVerifyChecksTheDatabaseAgainstItself(t *testing.T) {
	pool, dsn := pgtest.NewDB(t)
	ctx := context.Background()
	b, err := broker.Start(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cl, err := topics.NewClient(b.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	envl, err := schemas.New("user.registered", "k", "u1", map[string]int{"n": 1}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	rec, err := topics.Record(topics.FiatCommands, envl)
	if err != nil {
		t.Fatal(err)
	}
	res := cl.ProduceSync(ctx, rec)
	if err := res.FirstErr(); err != nil {
		t.Fatal(err)
	}
	part := res[0].Record.Partition

	// The chain: the deposit t1's entry, a user's entry, the transfer t2's
	// entry last (a deleted tail is invisible to the chain check).
	const salt = "verify-test-salt"
	prev := ledger.GenesisPrevHash
	var entries []ledger.Entry
	for h, src := range []struct{ kind, id string }{{schemas.LedgerKindDeposit, "t1"}, {"note", "tx2"}, {schemas.LedgerKindTransfer, "t2"}} {
		amount := int64(h+1) * 100
		e := ledger.Entry{ID: "e" + string(rune('1'+h)), Height: int64(h + 1), Kind: src.kind, ActorUserID: "u1",
			SourceID: src.id, AmountCents: &amount, Currency: "KZT",
			Timestamp: time.Now().UTC().Truncate(time.Microsecond), PrevHash: prev}
		e.Hash = e.ComputeHash(salt)
		prev = e.Hash
		entries = append(entries, e)
	}
	if err := ledger.Insert(ctx, pool, entries); err != nil {
		t.Fatal(err)
	}
	// t4 is a transfer whose append is in flight: in an event-log row above
	// the relay's cursor.
	if _, err := pool.Exec(ctx, `
INSERT INTO fiat_wallets (id, user_id, currency, balance) VALUES ('w1', 'u1', 'KZT', 600), ('w2', 'u2', 'KZT', 390);
UPDATE fiat_wallets SET balance = 10 WHERE id = 'fee-KZT';
INSERT INTO fiat_transactions (id, kind, status, to_wallet, to_user, amount, currency, created_at)
    VALUES ('t1', 'deposit', 'completed', 'w1', 'u1', 1000, 'KZT', now());
INSERT INTO fiat_transactions (id, kind, status, from_wallet, to_wallet, from_user, to_user, amount, fee, currency, created_at)
    VALUES ('t2', 'transfer', 'completed', 'w1', 'w2', 'u1', 'u2', 290, 10, 'KZT', now()),
           ('t4', 'transfer', 'completed', 'w1', 'w2', 'u1', 'u2', 100, 0, 'KZT', now());
INSERT INTO reputation_events (id, user_id, kind, source_module, weight, score_after, rank_before, rank_after, seq, created_at)
    VALUES ('r1', 'u1', 'k', 'm', 5, 5, 'a', 'a', 1, now()), ('r2', 'u1', 'k', 'm', -2, 3, 'a', 'a', 2, now());
INSERT INTO reputation_scores (user_id, score, rank, event_count, updated_at) VALUES ('u1', 3, 'a', 2, now())`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO consumer_positions (group_name, topic, partition, next_offset) VALUES ('fiat', $1, $2, 1)`,
		topics.FiatCommands, part); err != nil {
		t.Fatal(err)
	}
	published := verifyLogRow(t, pool, topics.EventsFiat, "transfer.completed", map[string]string{"id": "t2"})
	publishRow(t, cl, published)
	inFlight := verifyLogRow(t, pool, topics.LedgerAppend, schemas.TypeLedgerAppend,
		schemas.LedgerAppend{Kind: schemas.LedgerKindTransfer, SourceID: "t4", ActorUserID: "u1"})
	if err := pipeline.SetLogCursor(ctx, pool, published.seq); err != nil {
		t.Fatal(err)
	}

	env := map[string]string{"DATABASE_URL": dsn, "LEDGER_SALT": salt, "KAFKA_BROKERS": strings.Join(b.Addrs(), ",")}
	run := func(env map[string]string) (int, string) {
		var out bytes.Buffer
		code := runVerify(nil, func(k string) string { return env[k] }, &out)
		return code, out.String()
	}
	checks := []string{"ledger chain", "wallet balances", "reputation", "consumer positions",
		cledger.CheckSourcesAnchored, cledger.CheckEntriesSourced, relay.CheckPublished}
	allOK := func(when string) {
		t.Helper()
		code, out := run(env)
		if code != 0 || strings.Count(out, "\n") != len(checks) {
			t.Fatalf("%s: exit %d\n%s", when, code, out)
		}
		for _, c := range checks {
			if !strings.HasPrefix(lineOf(out, c), "ok ") {
				t.Fatalf("%s: %s is not ok:\n%s", when, c, out)
			}
		}
	}
	allOK("a consistent database, t4's append above the relay cursor")
	code, out := run(env)
	if !strings.Contains(out, "3 entries, hashes recomputed") || !strings.Contains(out, "4 wallets equal") ||
		!strings.Contains(out, "1 scores equal") || !strings.Contains(out, "1 positions within") ||
		!strings.Contains(out, "in flight (1;") || !strings.Contains(out, "2 module entries each name a record") ||
		!strings.Contains(out, "1 events of 1 event-log rows up to the relay cursor") {
		t.Fatalf("the checks did not count what they checked: exit %d\n%s", code, out)
	}
	// Published, not yet applied: still in flight, on ledger.append.
	publishRow(t, cl, inFlight)
	if err := pipeline.SetLogCursor(ctx, pool, inFlight.seq); err != nil {
		t.Fatal(err)
	}
	allOK("t4's append on ledger.append above the appender's position")

	for _, c := range []struct {
		check   string
		corrupt func() // undone by undo
		undo    func()
		want    string
	}{
		{"ledger chain", sqlStep(t, pool, `UPDATE ledger_entries SET amount_cents = 999 WHERE height = 2`),
			sqlStep(t, pool, `UPDATE ledger_entries SET amount_cents = 200 WHERE height = 2`), "hash_mismatch at height 2"},
		{"wallet balances", sqlStep(t, pool, `UPDATE fiat_wallets SET balance = balance + 1 WHERE id = 'w2'`),
			sqlStep(t, pool, `UPDATE fiat_wallets SET balance = balance - 1 WHERE id = 'w2'`), `first "w2": balance 391, transactions 390`},
		{"reputation", sqlStep(t, pool, `UPDATE reputation_scores SET score = 4`), sqlStep(t, pool, `UPDATE reputation_scores SET score = 3`),
			"score 4, events sum 3"},
		{"consumer positions", sqlStep(t, pool, `UPDATE consumer_positions SET next_offset = 2 WHERE group_name = 'fiat'`),
			sqlStep(t, pool, `UPDATE consumer_positions SET next_offset = 1 WHERE group_name = 'fiat'`), "at 2 past the topic end 1"},
		// A deleted entry (the chain's tail: the chain check cannot see it).
		{cledger.CheckSourcesAnchored, sqlStep(t, pool, `DELETE FROM ledger_entries WHERE height = 3`),
			func() {
				if err := ledger.Insert(ctx, pool, entries[2:]); err != nil {
					t.Fatal(err)
				}
			}, "1 records have no entry though their append is behind the horizon (relay cursor " + strconv.FormatInt(inFlight.seq, 10) +
				", appender at 0): fiat:transfer t2"},
		// The entry's record is gone (t1 deleted and written back under
		// another id: then tX has no entry either).
		{cledger.CheckEntriesSourced, sqlStep(t, pool, `UPDATE fiat_transactions SET id = 'tX' WHERE id = 't1'`),
			sqlStep(t, pool, `UPDATE fiat_transactions SET id = 't1' WHERE id = 'tX'`),
			"1 of 2 module entries name a record that does not exist: fiat:deposit t1"},
	} {
		c.corrupt()
		code, out := run(env)
		if code != 1 || !strings.HasPrefix(lineOf(out, c.check), "FAILED ") || !strings.Contains(lineOf(out, c.check), c.want) {
			t.Errorf("%s corrupted: exit %d, want 1 and a FAILED line naming it with %q:\n%s", c.check, code, c.want, out)
		}
		c.undo()
	}
	allOK("every corruption undone")

	// An event-log row the cursor passed that never reached its topic.
	lost := verifyLogRow(t, pool, topics.EventsFiat, "transfer.completed", map[string]string{"id": "t4"})
	if err := pipeline.SetLogCursor(ctx, pool, lost.seq); err != nil {
		t.Fatal(err)
	}
	code, out = run(env)
	if want := "1 of 3 events of the event-log rows up to the relay cursor " + strconv.FormatInt(lost.seq, 10) +
		" are not on their topic: events.fiat " + lost.id; code != 1 || lineOf(out, relay.CheckPublished) != "FAILED  "+want {
		t.Fatalf("an unpublished event-log row below the cursor: exit %d, want %q\n%s", code, want, out)
	}
	publishRow(t, cl, lost)
	allOK("the lost row published")

	// Without the salt and a broker: what could not be checked says
	// SKIPPED, never ok, and the exit code stays 0.
	code, out = run(map[string]string{"DATABASE_URL": dsn, "KAFKA_BROKERS": "127.0.0.1:1"})
	if code != 0 || !strings.HasPrefix(lineOf(out, "ledger chain"), "SKIPPED hashes not recomputed: LEDGER_SALT is not set") ||
		!strings.HasPrefix(lineOf(out, "consumer positions"), "SKIPPED not checked: no broker reachable at 127.0.0.1:1") ||
		!strings.HasPrefix(lineOf(out, relay.CheckPublished), "SKIPPED not checked: no broker reachable") ||
		!strings.HasPrefix(lineOf(out, cledger.CheckSourcesAnchored), "SKIPPED 1 records without an entry (e.g. fiat:transfer t4)") ||
		strings.Count(out, " ok ") != 3 {
		t.Fatalf("without the salt and a broker: exit %d\n%s", code, out)
	}

	// Applied (the appender's position passed it) and still no entry: missing.
	sqlStep(t, pool, `INSERT INTO consumer_positions (group_name, topic, partition, next_offset) VALUES ($1, $2, 0, 1)`,
		topics.GroupLedger, topics.LedgerAppend)()
	code, out = run(env)
	if code != 1 || !strings.Contains(lineOf(out, cledger.CheckSourcesAnchored), "appender at 1): fiat:transfer t4") {
		t.Fatalf("an applied append without its entry: exit %d\n%s", code, out)
	}

	// Without the salt, a broken link still fails.
	sqlStep(t, pool, `UPDATE ledger_entries SET prev_hash = repeat('1', 64) WHERE height = 3`)()
	code, out = run(map[string]string{"DATABASE_URL": dsn, "KAFKA_BROKERS": "127.0.0.1:1"})
	if code != 1 || lineOf(out, "ledger chain") != "FAILED  prev_hash_mismatch at height 3 of 3 entries" {
		t.Fatalf("without the salt, a broken link: exit %d\n%s", code, out)
	}
}

// sqlStep returns a function running sql on pool.
func sqlStep(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) func() {
	return func() {
		t.Helper()
		if _, err := pool.Exec(context.Background(), sql, args...); err != nil {
			t.Fatal(err)
		}
	}
}

// logRow is one event-log row of one event, as verify's tests write it.
type logRow struct {
	seq   int64
	id    string
	row   pipeline.OutboxRow
	topic string
}

// verifyLogRow appends a one-event row to the event log (not published).
func verifyLogRow(t *testing.T, pool *pgxpool.Pool, topic, typ string, data any) logRow {
	t.Helper()
	ctx := context.Background()
	env, err := schemas.New(typ, "", "u1", data, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	row, err := pipeline.EventRow(topic, env)
	if err != nil {
		t.Fatal(err)
	}
	if err := pipeline.InsertOutbox(ctx, pool, []pipeline.OutboxRow{row}); err != nil {
		t.Fatal(err)
	}
	var seq int64
	if err := pool.QueryRow(ctx, `SELECT max(seq) FROM event_log`).Scan(&seq); err != nil {
		t.Fatal(err)
	}
	return logRow{seq: seq, id: env.ID, row: row, topic: topic}
}

// publishRow produces a row's event as the relay does.
func publishRow(t *testing.T, cl *kgo.Client, r logRow) {
	t.Helper()
	rec := topics.RawRecord(r.row.Topic, r.row.Key, r.row.Type, r.row.EventID, r.row.Payload)
	if err := cl.ProduceSync(context.Background(), rec).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// lineOf returns what verify printed after the check's name.
func lineOf(out, check string) string {
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, check+":"); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

// TestAcceptGapFlag: `platform consume --accept-gap <group>` and `platform
// run --accept-gap` set the flag the consumer groups are built with; it is
// off unless given.
func TestAcceptGapFlag(t *testing.T) {
	var accept bool
	rest, err := parseFlags("consume", []string{"--accept-gap", "fiat-applier"}, gapFlag(&accept))
	if err != nil || !accept || len(rest) != 1 || rest[0] != "fiat-applier" {
		t.Fatalf("consume --accept-gap fiat-applier: accept=%v rest=%v err=%v", accept, rest, err)
	}
	accept = false
	if _, err := parseFlags("run", nil, gapFlag(&accept)); err != nil || accept {
		t.Fatalf("run without the flag: accept=%v err=%v", accept, err)
	}
}

// TestVerifyReadsTheEnvFile: `platform verify --env-file PATH` reads its
// settings from the file like every command (issue 45: it failed with "flag
// provided but not defined", and without the salt in the environment it
// could not recompute the hashes).
func TestVerifyReadsTheEnvFile(t *testing.T) {
	_, dsn := pgtest.NewDB(t)
	for _, k := range []string{"DATABASE_URL", "LEDGER_SALT", "KAFKA_BROKERS", "PLATFORM_ENV_FILE", "PLATFORM_ENV"} {
		t.Setenv(k, "")
	}
	path := filepath.Join(t.TempDir(), "platform.env")
	file := "DATABASE_URL=" + quoteShell(dsn) + "\nLEDGER_SALT=from-the-file\nKAFKA_BROKERS=127.0.0.1:1\n"
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"verify", "--env-file", path}, {"--env-file=" + path, "verify"}} {
		code, out := captureStdout(t, func() int { return runMain(args) })
		if code != 0 || !strings.HasPrefix(lineOf(out, "ledger chain"), "ok      0 entries, hashes recomputed") {
			t.Errorf("platform %s: exit %d, want 0 with the salt of the file\n%s", strings.Join(args, " "), code, out)
		}
	}
}

// captureStdout runs f with os.Stdout going to a pipe and returns what it
// wrote.
func captureStdout(t *testing.T, f func() int) (int, string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	code := f()
	os.Stdout = saved
	w.Close()
	return code, <-done
}
