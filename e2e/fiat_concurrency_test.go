package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/segmentio/ksuid"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// fiatLoad is a set of funded users and the results of transfers between them.
type fiatLoad struct {
	p         *harness.Platform
	users     []harness.User
	wallets   []string
	deposited int64
	// withdrawn is what acknowledged withdrawals took out (the nemesis
	// test's; conservation counts it).
	withdrawn int64
	client    *http.Client
	retries   atomic.Int64 // requests re-sent after a transport error or a 5xx
	// settledAfterRetry counts transfers answered 200 only after a retry:
	// requests that were in flight when the process died.
	settledAfterRetry atomic.Int64

	mu      sync.Mutex
	results map[string]transferOutcome // by transaction id
	byKey   map[string][]byte          // first 200 body per Idempotency-Key
}

type transferOutcome struct {
	fee    int64
	amount int64
	from   int
	to     int
}

func newFiatLoad(t *testing.T, p *harness.Platform, secret string, n int, each int64) *fiatLoad {
	t.Helper()
	l := &fiatLoad{p: p, client: &http.Client{Timeout: 20 * time.Second},
		results: map[string]transferOutcome{}, byKey: map[string][]byte{}}
	for i := 0; i < n; i++ {
		u := p.Register(t, fmt.Sprintf("fiat-load%d", i))
		w := fiatCreateWallet(t, p, u, "KZT")
		fiatDeposit(t, p, secret, u, w, each)
		l.users = append(l.users, u)
		l.wallets = append(l.wallets, w)
		l.deposited += each
	}
	return l
}

// post sends one transfer; err is a transport failure (the process is down).
func (l *fiatLoad) post(from, to int, amount int64, key string) (int, []byte, http.Header, error) {
	body, _ := json.Marshal(map[string]any{"fromWalletId": l.wallets[from], "toEmail": l.users[to].Email,
		"amountKzt": amount, "memo": "load"})
	req, err := http.NewRequest(http.MethodPost, l.p.BaseURL+"/api/fiat/transfer", bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+l.users[from].Token)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, resp.Header, err
}

// transfer sends until it gets an answer that is not a transport error or a
// 5xx, retrying with the same key, and records a 200. It returns a problem
// description, or "".
func (l *fiatLoad) transfer(from, to int, amount int64, key string, retryUntil time.Time) string {
	retried := false
	for {
		status, body, _, err := l.post(from, to, amount, key)
		if err == nil && status < 500 {
			switch status {
			case http.StatusOK:
				var res struct {
					TransactionID string `json:"transactionId"`
					FeeKzt        int64  `json:"feeKzt"`
				}
				if err := json.Unmarshal(body, &res); err != nil || res.TransactionID == "" {
					return fmt.Sprintf("bad 200 body %s", body)
				}
				l.mu.Lock()
				defer l.mu.Unlock()
				if first, ok := l.byKey[key]; ok && key != "" && !bytes.Equal(first, body) {
					return fmt.Sprintf("key %s answered %s then %s", key, first, body)
				}
				if key != "" {
					l.byKey[key] = body
				}
				l.results[res.TransactionID] = transferOutcome{fee: res.FeeKzt, amount: amount, from: from, to: to}
				if retried {
					l.settledAfterRetry.Add(1)
				}
				return ""
			case http.StatusBadRequest:
				if !bytes.Contains(body, []byte("insufficient_balance")) {
					return fmt.Sprintf("unexpected 400 %s", body)
				}
				return ""
			default:
				return fmt.Sprintf("unexpected %d %s", status, body)
			}
		}
		if key == "" || time.Now().After(retryUntil) {
			return fmt.Sprintf("no answer: %v %d %s", err, status, body)
		}
		l.retries.Add(1)
		retried = true
		time.Sleep(100 * time.Millisecond)
	}
}

// run sends total transfers from workers goroutines; every dupEvery-th is
// sent twice with the same key. onProgress is called after each answer.
func (l *fiatLoad) run(t *testing.T, total, workers, dupEvery int, keyed bool, deadline time.Time, onProgress func(done int64)) {
	t.Helper()
	var next, done atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan string, total*2)
	run := ksuid.New().String()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 7))
			for {
				i := next.Add(1)
				if i > int64(total) {
					return
				}
				from := rng.IntN(len(l.users))
				to := (from + 1 + rng.IntN(len(l.users)-1)) % len(l.users)
				amount := int64(1 + rng.IntN(20_000))
				key := ""
				if keyed || i%int64(dupEvery) == 0 {
					key = fmt.Sprintf("%s-%d", run, i)
				}
				sends := 1
				if i%int64(dupEvery) == 0 {
					sends = 2
				}
				for s := 0; s < sends; s++ {
					if msg := l.transfer(from, to, amount, key, deadline); msg != "" {
						errs <- msg
					}
				}
				if onProgress != nil {
					onProgress(done.Add(1))
				}
			}
		}(uint64(w))
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
}

// check verifies that at least minSettled transfers settled (a run in which
// everything was refused proves nothing), conservation, non-negative
// balances, and that every answered transfer is in both parties' histories
// exactly once.
func (l *fiatLoad) check(t *testing.T, minSettled int) {
	t.Helper()
	if len(l.results) < minSettled {
		t.Fatalf("only %d transfers settled, want at least %d", len(l.results), minSettled)
	}
	var sum, fees int64
	for i, u := range l.users {
		b := fiatBalance(t, l.p, u, l.wallets[i])
		if b < 0 {
			t.Fatalf("negative balance %d for %s", b, u.Email)
		}
		sum += b
	}
	for _, r := range l.results {
		fees += r.fee
	}
	if sum+fees+l.withdrawn != l.deposited {
		t.Fatalf("balances %d + fees %d + withdrawn %d = %d, deposited %d", sum, fees, l.withdrawn, sum+fees+l.withdrawn, l.deposited)
	}
	count := map[string]int{}
	for _, u := range l.users {
		for _, id := range fiatHistory(t, l.p, u) {
			count[id]++
		}
	}
	for id := range l.results {
		if count[id] != 2 {
			t.Fatalf("transaction %s appears %d times in the histories, want 2 (sender and receiver)", id, count[id])
		}
	}
	var inHistory int
	for id, n := range count {
		if n == 2 {
			inHistory++
			if _, ok := l.results[id]; !ok {
				t.Fatalf("transfer %s is in the history but was never answered 200", id)
			}
		}
	}
	t.Logf("%d transfers settled, fees %d, balances %d", len(l.results), fees, sum)
}

func TestFiatConcurrentTransfers(t *testing.T) {
	p := shared(t)
	l := newFiatLoad(t, p, fiatSecret(t, p), 20, 1_000_000)
	start := time.Now()
	l.run(t, 2000, 32, 10, false, time.Now().Add(30*time.Second), nil)
	elapsed := time.Since(start)
	t.Logf("2000 transfers (+200 replays) in %s (%.0f/s)", elapsed, 2200/elapsed.Seconds())
	l.check(t, 2000*9/10)
}

func TestFiatCrashRecovery(t *testing.T) {
	t.Parallel() // a long test: see "Parallel tests" in main_test.go
	p := harness.Start(t, harness.Options{})
	l := newFiatLoad(t, p, fiatSecret(t, p), 20, 1_000_000)
	const total = 1500
	killed := make(chan struct{})
	var once sync.Once
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.run(t, total, 32, 10, true, time.Now().Add(45*time.Second), func(n int64) {
			if n == total/3 {
				once.Do(func() { close(killed) })
			}
		})
	}()
	select {
	case <-killed:
	case <-done:
		t.Fatal("load finished before the crash point")
	}
	p.Kill()
	time.Sleep(300 * time.Millisecond)
	p.Restart()
	<-done
	if l.retries.Load() == 0 {
		t.Fatal("no request was retried: the crash did not hit the load")
	}
	if l.settledAfterRetry.Load() == 0 {
		t.Fatal("no request in flight at the kill settled after the restart")
	}
	t.Logf("%d requests retried across the crash; %d transfers in flight at the kill settled after it",
		l.retries.Load(), l.settledAfterRetry.Load())
	l.check(t, total*8/10)
	l.checkDerived(t)
}

// checkDerived checks what the settled transfers caused downstream once the
// platform is quiet: each has exactly one ledger entry and the chain is
// valid, and each sender and receiver of a transfer of 10 KZT or more
// earned wallet-active once that UTC day (derived by the reputation applier
// from transfer.completed), with every score the sum of its events. It
// fails when the derivation skips a day, counts one twice, or credits the
// wrong user.
func (l *fiatLoad) checkDerived(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	pg, err := pgxpool.New(ctx, l.p.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	waitQuiet(t, l.p, pg, topics.GroupFiat, topics.GroupLedger, topics.GroupReputation)

	entries := map[string]int{}
	rows, err := pg.Query(ctx, `SELECT source_id FROM ledger_entries WHERE kind = $1`, schemas.LedgerKindTransfer)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var src string
		if err := rows.Scan(&src); err != nil {
			t.Fatal(err)
		}
		entries[src]++
	}
	rows.Close()
	if len(entries) != len(l.results) {
		t.Fatalf("%d transfer ledger entries for %d settled transfers", len(entries), len(l.results))
	}
	for id := range l.results {
		if entries[id] != 1 {
			t.Fatalf("transfer %s has %d ledger entries", id, entries[id])
		}
	}
	if v := l.p.Get(t, "/api/ledger/chain/verify", "").JSON(t); v["valid"] != true {
		t.Fatalf("chain after the crash: %v", v)
	}

	// wallet-active is earned from 10 KZT, once per user and UTC day of
	// the transfer (its fiat_transactions.created_at is the event's time).
	want := map[string]bool{} // user + " " + source
	var ids []string
	for id := range l.results {
		ids = append(ids, id)
	}
	days := map[string]string{}
	rows, err = pg.Query(ctx, `SELECT id, created_at FROM fiat_transactions WHERE id = ANY($1)`, ids)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var at time.Time
		if err := rows.Scan(&id, &at); err != nil {
			t.Fatal(err)
		}
		days[id] = "day:" + at.UTC().Format(time.DateOnly)
	}
	rows.Close()
	for id, r := range l.results {
		if r.amount >= schemas.DonationReputationMinKzt {
			want[l.users[r.from].ID+" "+days[id]] = true
			want[l.users[r.to].ID+" "+days[id]] = true
		}
	}
	got := map[string]bool{}
	rows, err = pg.Query(ctx, `SELECT source_id, user_id FROM reputation_events WHERE kind = $1`, schemas.RepKindWalletActive)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var src, user string
		if err := rows.Scan(&src, &user); err != nil {
			t.Fatal(err)
		}
		if got[user+" "+src] {
			t.Fatalf("wallet-active %s of %s counted twice", src, user)
		}
		got[user+" "+src] = true
	}
	rows.Close()
	if len(got) != len(want) {
		t.Fatalf("%d wallet-active events for %d (user, day) pairs with a transfer of 10 KZT or more", len(got), len(want))
	}
	for k := range want {
		if !got[k] {
			t.Fatalf("no wallet-active for %s", k)
		}
	}
	var wrong int
	if err := pg.QueryRow(ctx, `SELECT count(*) FROM reputation_scores s
		LEFT JOIN (SELECT user_id, sum(weight) AS total, count(*) AS n FROM reputation_events GROUP BY user_id) e USING (user_id)
		WHERE s.score <> coalesce(e.total, 0) OR s.event_count <> coalesce(e.n, 0)`).Scan(&wrong); err != nil || wrong != 0 {
		t.Fatalf("%d scores differ from the sum of their events (%v)", wrong, err)
	}
	t.Logf("%d settled transfers: one ledger entry each; %d wallet-active (user, day) pairs", len(l.results), len(want))
}
