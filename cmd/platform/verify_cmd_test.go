package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/ledger"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/broker"
)

// TestVerifyChecksTheDatabaseAgainstItself: a consistent database passes
// every check of `platform verify`; each corruption fails the check that
// names it, and only that one, with exit code 1.
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

	const salt = "verify-test-salt"
	prev := ledger.GenesisPrevHash
	var entries []ledger.Entry
	for h := int64(1); h <= 3; h++ {
		amount := h * 100
		e := ledger.Entry{ID: "e" + string(rune('0'+h)), Height: h, Kind: "transfer", ActorUserID: "u1",
			SourceID: "tx" + string(rune('0'+h)), AmountCents: &amount, Currency: "KZT",
			Timestamp: time.Now().UTC().Truncate(time.Microsecond), PrevHash: prev}
		e.Hash = e.ComputeHash(salt)
		prev = e.Hash
		entries = append(entries, e)
	}
	if err := ledger.Insert(ctx, pool, entries); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `
INSERT INTO fiat_wallets (id, user_id, currency, balance) VALUES ('w1', 'u1', 'KZT', 700), ('w2', 'u2', 'KZT', 290);
UPDATE fiat_wallets SET balance = 10 WHERE id = 'fee-KZT';
INSERT INTO fiat_transactions (id, kind, status, to_wallet, to_user, amount, currency, created_at)
    VALUES ('t1', 'deposit', 'completed', 'w1', 'u1', 1000, 'KZT', now());
INSERT INTO fiat_transactions (id, kind, status, from_wallet, to_wallet, from_user, to_user, amount, fee, currency, created_at)
    VALUES ('t2', 'transfer', 'completed', 'w1', 'w2', 'u1', 'u2', 290, 10, 'KZT', now());
INSERT INTO reputation_events (id, user_id, kind, source_module, weight, score_after, rank_before, rank_after, seq, created_at)
    VALUES ('r1', 'u1', 'k', 'm', 5, 5, 'a', 'a', 1, now()), ('r2', 'u1', 'k', 'm', -2, 3, 'a', 'a', 2, now());
INSERT INTO reputation_scores (user_id, score, rank, event_count, updated_at) VALUES ('u1', 3, 'a', 2, now())`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO consumer_positions (group_name, topic, partition, next_offset) VALUES ('fiat', $1, $2, 1)`,
		topics.FiatCommands, part); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DATABASE_URL": dsn, "LEDGER_SALT": salt, "KAFKA_BROKERS": strings.Join(b.Addrs(), ",")}
	run := func(env map[string]string) (int, string) {
		var out bytes.Buffer
		code := runVerify(nil, func(k string) string { return env[k] }, &out)
		return code, out.String()
	}
	code, out := run(env)
	if code != 0 || strings.Count(out, " ok ") != 4 || strings.Count(out, "\n") != 4 {
		t.Fatalf("a consistent database: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "3 entries, hashes recomputed") || !strings.Contains(out, "4 wallets equal") ||
		!strings.Contains(out, "1 scores equal") || !strings.Contains(out, "1 positions within") {
		t.Fatalf("the checks did not count what they checked:\n%s", out)
	}

	for _, c := range []struct {
		check, corrupt, undo, want string
	}{
		{"ledger chain", `UPDATE ledger_entries SET amount_cents = 999 WHERE height = 2`,
			`UPDATE ledger_entries SET amount_cents = 200 WHERE height = 2`, "hash_mismatch at height 2"},
		{"wallet balances", `UPDATE fiat_wallets SET balance = balance + 1 WHERE id = 'w2'`,
			`UPDATE fiat_wallets SET balance = balance - 1 WHERE id = 'w2'`, `first "w2": balance 291, transactions 290`},
		{"reputation", `UPDATE reputation_scores SET score = 4`, `UPDATE reputation_scores SET score = 3`, "score 4, events sum 3"},
		{"consumer positions", `UPDATE consumer_positions SET next_offset = 2`, `UPDATE consumer_positions SET next_offset = 1`,
			"at 2 past the topic end 1"},
	} {
		if _, err := pool.Exec(ctx, c.corrupt); err != nil {
			t.Fatal(err)
		}
		code, out := run(env)
		if code != 1 || strings.Count(out, "FAIL") != 1 || !strings.HasPrefix(lineOf(out, c.check), "FAIL ") || !strings.Contains(out, c.want) {
			t.Errorf("%s corrupted: exit %d, want 1 and one FAIL line naming it with %q:\n%s", c.check, code, c.want, out)
		}
		if _, err := pool.Exec(ctx, c.undo); err != nil {
			t.Fatal(err)
		}
	}

	// Without the salt the links are still checked; without a broker the
	// positions are not, and the line says so.
	if _, err := pool.Exec(ctx, `UPDATE ledger_entries SET prev_hash = repeat('1', 64) WHERE height = 3`); err != nil {
		t.Fatal(err)
	}
	code, out = run(map[string]string{"DATABASE_URL": dsn, "KAFKA_BROKERS": "127.0.0.1:1"})
	if code != 1 || lineOf(out, "ledger chain") != "FAIL prev_hash_mismatch at height 3 of 3 entries" ||
		!strings.Contains(out, "not checked: no broker reachable at 127.0.0.1:1") {
		t.Fatalf("without the salt and a broker: exit %d\n%s", code, out)
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
