package e2e

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
	"github.com/segmentio/ksuid"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/storage/clickhouse"
)

func ledgerSource() string { return "e2e-" + strings.ToLower(ksuid.New().String()) }

func ledgerAppend(t testing.TB, p *harness.Platform, token string, body map[string]any) harness.Response {
	t.Helper()
	return p.Post(t, "/api/ledger/entries", token, body)
}

func TestLedgerEntriesAndVerify(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "ledger")
	src := ledgerSource()
	body := map[string]any{"kind": "e2e:test", "sourceId": src, "amountCents": 1250, "currency": "KZT",
		"meta": map[string]any{"note": "héllo", "n": 1.0, "nested": map[string]any{"b": 1, "a": 2}}}
	r := ledgerAppend(t, p, u.Token, body)
	if r.Status != http.StatusCreated {
		t.Fatalf("append: %d %s", r.Status, r.Body)
	}
	e := r.JSON(t)
	if e["kind"] != "e2e:test" || e["sourceId"] != src || e["actorUserId"] != u.ID || e["amountCents"].(float64) != 1250 ||
		len(e["hash"].(string)) != 64 || len(e["prevHash"].(string)) != 64 || e["height"].(float64) < 1 {
		t.Fatalf("entry: %v", e)
	}
	id := e["id"].(string)

	// A re-sent append of the same source is the same entry.
	again := ledgerAppend(t, p, u.Token, body)
	if again.Status != http.StatusOK || again.JSON(t)["id"] != id {
		t.Fatalf("re-sent append: %d %s", again.Status, again.Body)
	}

	one := p.Get(t, "/api/ledger/entries/"+id, "")
	if one.Status != http.StatusOK {
		t.Fatalf("get: %d %s", one.Status, one.Body)
	}
	oe := one.JSON(t)
	chain := oe["chain"].(map[string]any)
	if oe["hash"] != e["hash"] || chain["previousHash"] != e["prevHash"] || chain["linked"] != true {
		t.Fatalf("entry with context: %v", oe)
	}

	list := p.Get(t, "/api/ledger/entries?kind=e2e:test&actorUserId="+u.ID, "")
	var page struct {
		Items []map[string]any `json:"items"`
	}
	list.Decode(t, &page)
	if list.Status != http.StatusOK || len(page.Items) != 1 || page.Items[0]["id"] != id {
		t.Fatalf("list: %d %s", list.Status, list.Body)
	}

	head := p.Get(t, "/api/ledger/chain/head", "").JSON(t)
	if head["height"].(float64) < e["height"].(float64) || len(head["hash"].(string)) != 64 {
		t.Fatalf("head: %v", head)
	}
	v := p.Get(t, "/api/ledger/chain/verify", "")
	vr := v.JSON(t)
	if v.Status != http.StatusOK || vr["valid"] != true || vr["verified"] != true || vr["height"].(float64) < e["height"].(float64) {
		t.Fatalf("verify: %d %s", v.Status, v.Body)
	}
	if h := p.Get(t, "/api/ledger/health", "").JSON(t); h["status"] != "ok" || h["lastEntryAt"] == nil {
		t.Fatalf("health: %v", h)
	}
	if o := p.Get(t, "/api/ledger/openapi.json", ""); o.Status != 200 || !strings.Contains(string(o.Body), "/api/ledger/chain/verify") {
		t.Fatalf("openapi: %d %s", o.Status, o.Body)
	}

	tests := []struct {
		name   string
		token  string
		body   any
		status int
		code   string
	}{
		{"no token", "", body, 401, "auth_required"},
		{"no kind", u.Token, map[string]any{"sourceId": "x"}, 422, "validation_failed"},
		{"string amount", u.Token, map[string]any{"kind": "k", "sourceId": "x", "amountCents": "5"}, 422, "validation_failed"},
		{"fraction", u.Token, map[string]any{"kind": "k", "sourceId": "x", "amountCents": 1.5}, 422, "validation_failed"},
		{"meta not object", u.Token, map[string]any{"kind": "k", "sourceId": "x", "meta": []int{1}}, 422, "validation_failed"},
		{"bad currency", u.Token, map[string]any{"kind": "k", "sourceId": "x", "currency": "kzt"}, 422, "validation_failed"},
		{"NUL", u.Token, map[string]any{"kind": "k\u0000", "sourceId": "x"}, 422, "validation_failed"},
		{"malformed", u.Token, []byte(`{"kind":`), 400, "invalid_json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := p.Post(t, "/api/ledger/entries", tt.token, tt.body)
			if r.Status != tt.status || r.JSON(t)["error"] != tt.code {
				t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, tt.status, tt.code)
			}
		})
	}
	for _, path := range []string{"/api/ledger/entries/nope", "/api/ledger/entries?since=yesterday"} {
		if r := p.Get(t, path, ""); r.Status != 404 && r.Status != 422 {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
	}
	if r := p.Get(t, "/api/ledger/entries?cursor=@@", ""); r.Status != 400 || r.JSON(t)["error"] != "invalid_cursor" {
		t.Fatalf("foreign cursor: %d %s", r.Status, r.Body)
	}
}

// ledgerPlatform is a platform of its own: these tests tamper with the chain
// and restart the process, which the shared one must not see.
func ledgerPlatform(t *testing.T) (*harness.Platform, *pgxpool.Pool) {
	t.Helper()
	// A tamper below the verified head is found by the background full
	// walk: run it every 2 s.
	p := harness.Start(t, harness.Options{Env: map[string]string{"LEDGER_AUDIT_INTERVAL": "2s"}})
	pool, err := pgxpool.New(context.Background(), p.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return p, pool
}

func TestLedgerTamperRestartAndStats(t *testing.T) {
	t.Parallel() // a long test: see "Parallel tests" in main_test.go
	p, pool := ledgerPlatform(t)
	ctx := context.Background()
	users := []harness.User{p.Register(t, "l1"), p.Register(t, "l2"), p.Register(t, "l3")}

	// Concurrent appends from many callers make one gap-free chain.
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u := users[i%3]
			r := ledgerAppend(t, p, u.Token, map[string]any{"kind": []string{"e2e:a", "e2e:b"}[i%2], "sourceId": fmt.Sprintf("s-%d", i), "amountCents": i + 1})
			if r.Status != http.StatusCreated {
				t.Errorf("append %d: %d %s", i, r.Status, r.Body)
			}
		}()
	}
	wg.Wait()
	verify := func() map[string]any {
		t.Helper()
		r := p.Get(t, "/api/ledger/chain/verify", "")
		if r.Status != http.StatusOK {
			t.Fatalf("verify: %d %s", r.Status, r.Body)
		}
		return r.JSON(t)
	}
	if v := verify(); v["valid"] != true || v["height"].(float64) != 30 {
		t.Fatalf("verify after concurrent appends: %v", v)
	}

	// A row changed directly in Postgres is reported at its height.
	tampers := []struct {
		name, sql string
	}{
		{"amount", `UPDATE ledger_entries SET amount_cents = amount_cents + 100 WHERE height = 17`},
		{"hash", `UPDATE ledger_entries SET hash = repeat('f', 64) WHERE height = 17`},
		{"prevHash", `UPDATE ledger_entries SET prev_hash = repeat('e', 64) WHERE height = 17`},
	}
	for _, tt := range tampers {
		var amount int64
		var hash, prev string
		if err := pool.QueryRow(ctx, `SELECT amount_cents, hash, prev_hash FROM ledger_entries WHERE height = 17`).Scan(&amount, &hash, &prev); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, tt.sql); err != nil {
			t.Fatal(err)
		}
		// Below the verified head: the background full walk finds it, and
		// every answer carries the break from then on.
		var v map[string]any
		harness.Eventually(t, 20*time.Second, tt.name+" tamper found", func() bool {
			v = verify()
			return v["valid"] == false
		})
		if v["verified"] != false || v["brokenAt"].(float64) != 17 || v["expectedPrevHash"] == nil || v["foundPrevHash"] == nil {
			t.Fatalf("%s tampered: %v", tt.name, v)
		}
		if _, err := pool.Exec(ctx, `UPDATE ledger_entries SET amount_cents = $1, hash = $2, prev_hash = $3 WHERE height = 17`, amount, hash, prev); err != nil {
			t.Fatal(err)
		}
		harness.Eventually(t, 20*time.Second, tt.name+" restored", func() bool { return verify()["valid"] == true })
	}

	// A crash and restart continues the chain without a gap or a duplicate.
	p.Kill()
	p.Restart()
	for i := 30; i < 40; i++ {
		if r := ledgerAppend(t, p, users[0].Token, map[string]any{"kind": "e2e:a", "sourceId": fmt.Sprintf("s-%d", i)}); r.Status != http.StatusCreated {
			t.Fatalf("append after restart: %d %s", r.Status, r.Body)
		}
	}
	// s-2 was appended by users[2]: entries de-duplicate per actor.
	if r := ledgerAppend(t, p, users[2].Token, map[string]any{"kind": "e2e:a", "sourceId": "s-2"}); r.Status != http.StatusOK {
		t.Fatalf("re-sent after restart: %d %s", r.Status, r.Body)
	}
	if v := verify(); v["valid"] != true || v["height"].(float64) != 40 {
		t.Fatalf("verify after restart: %v", v)
	}

	// /stats comes from ClickHouse and matches Postgres once the sink caught up.
	harness.Eventually(t, 30*time.Second, "ledger stats to match Postgres", func() bool {
		var st struct {
			Totals map[string]int64            `json:"totals"`
			ByKind map[string]map[string]int64 `json:"byKind"`
		}
		r := p.Get(t, "/api/ledger/stats", "")
		if r.Status != http.StatusOK {
			return false
		}
		r.Decode(t, &st)
		rows, err := pool.Query(ctx, `SELECT kind, count(*) FROM ledger_entries WHERE ts >= now() - interval '24 hours' GROUP BY kind`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var total int64
		n := 0
		for rows.Next() {
			var kind string
			var c int64
			if err := rows.Scan(&kind, &c); err != nil {
				t.Fatal(err)
			}
			total += c
			n++
			if st.ByKind[kind]["24h"] != c || st.ByKind[kind]["30d"] != c {
				return false
			}
		}
		return n == len(st.ByKind) && st.Totals["24h"] == total && total == 40
	})

	// The periodic audit emitted ledger.chain_verified, which the sink copied.
	harness.Eventually(t, 30*time.Second, "a ledger.chain_verified event in ClickHouse", func() bool {
		return ledgerAnalyticsCount(t, p, "SELECT count() FROM %s.events WHERE type = 'ledger.chain_verified'") > 0
	})
}

// ledgerAnalyticsCount runs a count query on the platform's ClickHouse
// database (named after its Postgres database); %s is the database.
func ledgerAnalyticsCount(t *testing.T, p *harness.Platform, query string) uint64 {
	t.Helper()
	addr := "127.0.0.1:19000"
	for _, kv := range p.Env {
		if v, ok := strings.CutPrefix(kv, "CLICKHOUSE_ADDR="); ok && v != "" {
			addr = v
		}
	}
	cfg, err := pgx.ParseConfig(p.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := clickhouse.Connect(ctx, addr, "default")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var n uint64
	if err := conn.QueryRow(ctx, fmt.Sprintf(query, clickhouse.DatabaseName(cfg.Database))).Scan(&n); err != nil {
		return 0
	}
	return n
}
