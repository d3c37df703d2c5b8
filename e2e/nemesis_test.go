package e2e

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/segmentio/ksuid"
	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/e2e/history"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

var (
	nemesisDuration = flag.Duration("nemesis.duration", 0, "how long the nemesis test loads and injures the cluster (default 75s; NEMESIS_DURATION)")
	nemesisSeed     = flag.Uint64("nemesis.seed", 0, "the fault schedule's seed (default random; NEMESIS_SEED)")
)

// nemesisSessionTimeout is the consumers' group session timeout
// (consumers/pipeline, sink, webhooks dispatcher: 10 s): a SIGSTOP lasts
// longer, so the group moves the stopped process's partitions away.
const nemesisSessionTimeout = 10 * time.Second

// nemesisCommandTimeout is the gateways' COMMAND_TIMEOUT (baseEnvForCluster).
const nemesisCommandTimeout = 5 * time.Second

// nemesisRecovery is the declared recovery bound of each fault kind: how
// long after the fault's end (the member back) a 503 or a cut answer may
// still belong to it. The history checker holds each fault to its own
// window — start to end plus this — never to a chain of grace periods.
var nemesisRecovery = history.Bounds{
	// Requests in flight on the killed gateway are cut at the kill; the
	// proxy marks it down within two 500 ms checks and the restarted one up
	// within two more.
	"gateway-kill": 5 * time.Second,
	// The killed consumer's partitions wait for the group to notice (the
	// session timeout) and rebalance; a command sent meanwhile times out
	// after COMMAND_TIMEOUT.
	"consumer-kill": nemesisSessionTimeout + nemesisCommandTimeout + 5*time.Second,
	// The zombie's wake-up rebalances the group once more.
	"consumer-stop": nemesisSessionTimeout + nemesisCommandTimeout + 5*time.Second,
	// The fault ends once the old primary is back as synchronous standby,
	// long after the promotion; a write meets the failover in its first
	// seconds.
	"primary-kill": nemesisCommandTimeout + 5*time.Second,
	// The relay re-takes its lock within seconds; commands do not wait on it.
	"relay-lock": nemesisCommandTimeout + 5*time.Second,
	// Issue 44's second round (nemesis_links_test.go). The broker back:
	// its clients reconnect, a command sent meanwhile timed out.
	"broker-kill": nemesisCommandTimeout + 10*time.Second,
	// The fault ends once the lost machine is back as synchronous standby;
	// the promotion itself waits for the leader key's 20 s TTL.
	"machine-kill": nemesisCommandTimeout + 5*time.Second,
	// Both back, one promoted, the other synchronous again: then the
	// platform's pools find the primary.
	"postgres-both-down": nemesisCommandTimeout + 10*time.Second,
	// The cut primary demotes itself; the fault ends once both replicate.
	"etcd-cut-primary": nemesisCommandTimeout + 10*time.Second,
	// Commits wait for the cut standby until wal_sender_timeout (10 s) and
	// Patroni's next loop; the fault ends when it is synchronous again.
	"replication-cut": nemesisCommandTimeout + 15*time.Second,
	// Commands through the cut gateway time out; after the heal its
	// producer's retransmissions wait out TCP's backoff.
	"gateway-broker-cut": nemesisCommandTimeout + 15*time.Second,
	// The consumer's statements in flight wait for TCP's retransmission
	// after the heal (backoff doubling from 200 ms: up to ~13 s for a 10 s
	// cut); commands on its partitions time out meanwhile.
	"consumer-pg-cut": nemesisSessionTimeout + nemesisCommandTimeout + 15*time.Second,
	// Commands do not wait on the relay.
	"relay-broker-cut": nemesisCommandTimeout + 5*time.Second,
	// Lost packets cost retransmissions; statements slow, a few commands
	// time out.
	"pg-loss": nemesisCommandTimeout + 10*time.Second,
	// A Postgres machine's clock 30 s off, then back: nothing should wait
	// on it.
	"clock-skew": nemesisCommandTimeout + 5*time.Second,
}

// TestNemesis drives the cluster of deploy/local/cluster.sh (HAProxy, two
// gateways, two processes of every consumer group, two relays, the broker
// process, Patroni primary + synchronous standby) through the proxy with a
// mixed load — fiat transfers, deposits, withdrawals, donations, trade
// transfers, mask charges, a webhook endpoint receiving events — while a
// seeded schedule kills gateways and consumers, stops a consumer past its
// session timeout, kills the Postgres primary and ends the relay's lock
// connection; every member is restored before the end. Then it asserts
// exactly once per acknowledged request, conservation, RPO 0, one ledger
// entry per source and a valid chain, reputation scores equal to their
// events, each webhook event delivered once, ClickHouse views equal to
// Postgres, no 5xx but 503 and those only inside a fault's window, each
// retried to success with its Idempotency-Key — the history checker of
// e2e/history on the record of every request. A body over 1 MiB is
// answered 400 payload_too_large through the proxy. Seed and duration:
// -nemesis.seed / NEMESIS_SEED, -nemesis.duration / NEMESIS_DURATION
// (make nemesis runs it alone, longer).
func TestNemesis(t *testing.T) {
	t.Parallel() // a long test: see "Parallel tests" in main_test.go
	if missing := harness.MissingClusterPackages(); len(missing) > 0 {
		msg := fmt.Sprintf("the cluster needs Debian packages %v (make cluster-deps installs them)", missing)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	duration := 2 * time.Minute
	if d, err := time.ParseDuration(os.Getenv("NEMESIS_DURATION")); err == nil {
		duration = d
	}
	if *nemesisDuration > 0 {
		duration = *nemesisDuration
	}
	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv("NEMESIS_SEED"), 10, 64); err == nil {
		seed = s
	}
	if *nemesisSeed != 0 {
		seed = *nemesisSeed
	}
	t.Logf("nemesis seed %d, duration %s (replay: NEMESIS_SEED=%d)", seed, duration, seed)

	rec := &history.Recorder{Base: &http.Transport{MaxIdleConnsPerHost: 64}}
	client := &http.Client{Timeout: 30 * time.Second, Transport: rec}
	env := map[string]string{}
	for k, v := range baseEnvForCluster() {
		env[k] = v
	}
	c := harness.StartLocalCluster(t, t.Failed, env)
	p := c.Proxy(client)
	p.Env = []string{"CLICKHOUSE_ADDR=" + os.Getenv("CLICKHOUSE_ADDR")}
	t.Logf("cluster up in %s on ports %d+", c.Dir, c.PortBase)
	secret := c.Secret("PROCESSOR_WEBHOOK_SECRET")
	nemesisBodyLimitThroughProxy(t, p)
	nemesisFenceSetup(t, c)
	alerts := startNemesisAlerts(t, c) // nemesis_alerts_test.go

	// The world: funded fiat users (one of them with a webhook endpoint),
	// donors and a campaign, trade accounts, masks, a gov proposal (the
	// analytics views compare it).
	fiat := nemesisFiatLoad(t, p, secret, 10, 2_000_000)
	fiat.client = client
	hook := newVerifyingHookReceiver(t, hookSecret)
	subscribeWebhook(t, p, fiat.users[0], hook.URL(), hookSecret, []string{"transfer.completed"})
	trade := newTradeLoad(t, p, "nemesis-trade", 4, 50, 300_000, seed, 10_000_000)
	dons := newDonationLoad(t, p, secret, "nemesis", 4)
	masks := newMaskLoad(t, p, 3)
	govCreate(t, p, p.Register(t, "nemesis-gov").Token, map[string]any{"title": "Nemesis", "summary": "s", "body": "b",
		"category": "nemesis", "voteMode": "yes-no-abstain", "quorum": 3, "threshold": 0.5})

	// The load runs for duration and until every kind of fault was injected
	// once; a request is retried with its key until answered (the bound only
	// ends a test whose cluster never recovers).
	begin := time.Now()
	stop := make(chan struct{})
	loading := func() bool {
		select {
		case <-stop:
			return false
		default:
			return true
		}
	}
	retryUntil := begin.Add(duration + 10*time.Minute)
	var wg sync.WaitGroup
	var deposits, withdrawals atomic.Int64
	run := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	run(func() {
		for loading() {
			fiat.run(t, 60, 8, 10, true, retryUntil, nil)
		}
	})
	run(func() {
		rng := rand.New(rand.NewPCG(seed, 1))
		for i := 0; loading(); i++ {
			u := rng.IntN(len(fiat.users))
			if i%2 == 0 {
				if nemesisDeposit(t, fiat, client, secret, u, 1000+rng.Int64N(50_000), retryUntil) {
					deposits.Add(1)
				}
			} else if nemesisWithdraw(t, fiat, client, u, 100+rng.Int64N(5_000), fmt.Sprintf("nemesis-wd-%d-%d", seed, i), retryUntil) {
				withdrawals.Add(1)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	var tradeNext atomic.Int64
	for w := 0; w < 3; w++ {
		run(func() {
			for loading() {
				// the plan's transfers, no more: a long run (or a slow
				// machine's) may send them all before it ends
				i := int(tradeNext.Add(1) - 1)
				if i >= len(trade.results) {
					return
				}
				trade.send(client, i, fmt.Sprintf("nemesis-trade-%d-%d", seed, i), retryUntil, func() {})
			}
		})
	}
	for w := 0; w < 2; w++ {
		run(func() {
			for i := 0; loading(); i++ {
				dons.send(t, client, fmt.Sprintf("nemesis-%d-%d-%d", seed, w, i), i, retryUntil)
			}
		})
		run(func() {
			for i := 0; loading(); i++ {
				masks.send(t, client, fmt.Sprintf("nemesis-%d-%d-%d", seed, w, i), i, retryUntil)
			}
		})
	}

	// The nemesis: one fault at a time, every kind once first (shuffled),
	// then random kinds, until ten seconds before the duration ends; the load
	// goes on five seconds past the last recovery.
	nem := &nemesis{c: c, rng: rand.New(rand.NewPCG(seed, 2)), rec: rec, addrs: c.Addrs(), fenceAcked: map[int]int{},
		everyKind: os.Getenv("NEMESIS_EVERY_KIND") != ""}
	// The alert table at the end, failed or not (before the cluster goes).
	t.Cleanup(func() { alerts.check(t, nem.faults) })
	if !nemesisQuiet(t) {
		nem.run(t, begin.Add(duration-10*time.Second))
	}
	time.Sleep(max(5*time.Second, time.Until(begin.Add(duration))))
	close(stop)
	wg.Wait()
	trade.results = trade.results[:min(int(tradeNext.Load()), len(trade.results))]
	c.Up()
	harness.Eventually(t, 90*time.Second, "Postgres replicated again", c.Replicated)
	t.Logf("cluster status after the nemesis:\n%s", c.Status())

	ctx := context.Background()
	db, err := pgxpool.New(ctx, c.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	waitQuiet(t, p, db, topics.GroupFiat, topics.GroupLedger, topics.GroupReputation, topics.GroupTrade, topics.GroupMask,
		topics.GroupSink, topics.GroupWebhooks)

	// The figures.
	byKind := map[string]int{}
	for _, f := range nem.faults {
		byKind[f.kind]++
	}
	t.Logf("requests %d; faults %v; transfers %d, deposits %d, withdrawals %d, donations %d, trade transfers %d, mask charges %d",
		rec.Count(), byKind, len(fiat.results), deposits.Load(), withdrawals.Load(), dons.count(), len(trade.results), masks.count())

	// The history: every request checked against what Postgres holds —
	// each acknowledged command applied once, no 500, 503s only in their
	// fault's window, conservation, one ledger entry per source, each
	// webhook event once and signed at receipt.
	nemesisCheckHistory(t, rec.History(), nemesisState(t, db, fiat, dons, nemesisWebhooks(t, hook, fiat)), nem.faults)
	nemesisFenceCheck(t, c, nem.fenceAcked)

	// Every acknowledged request applied once; RPO 0: the acknowledged
	// writes are all there after the failovers.
	dons.check(t, db)
	masks.check(t, db)
	nemesisCheckReputation(t, db)
	accepted, _ := trade.check(t)
	fiat.check(t, 1)
	t.Logf("RPO 0: %d transfers, %d withdrawals, %d deposits, %d donations, %d trade transfers, %d mask charges acknowledged and present after %d primary kills",
		len(fiat.results), withdrawals.Load(), deposits.Load(), dons.count(), accepted, masks.count(), byKind["primary-kill"])
	w := newAnalyticsWorld(t, p)
	w.db = c.ClickHouseDB
	w.compare(t, "after the nemesis")
	fiat.checkDerived(t)
}

// baseEnvForCluster is the environment the nemesis gives every platform
// process: open rate limits and budgets (the load comes from one address),
// the test admins, private webhook targets (the receiver is on loopback) and
// COMMAND_TIMEOUT 5 s.
func baseEnvForCluster() map[string]string {
	return map[string]string{
		"WEBHOOK_ALLOW_PRIVATE": "1", "RATE_LIMIT_READ": "0", "RATE_LIMIT_WRITE": "0", "RATE_LIMIT_AUTH": "0",
		"RATE_LIMIT_MONEY": "0", "RATE_LIMIT_PARTNER": "0", "RATE_LIMIT_PARTNER_IP": "0", "ABUSE_BUDGETS": "0",
		"FIAT_ADMIN_EMAILS": harness.FiatAdminEmail, "GOV_ADMIN_EMAILS": harness.GovAdminEmail,
		"CHARITY_ADMIN_EMAILS": harness.CharityAdminEmail, "REPUTATION_ADMIN_EMAILS": harness.ReputationAdminEmail,
		"REPUTATION_SERVICE_KEY": harness.ReputationServiceKey, "COMMAND_TIMEOUT": "5s",
	}
}

// nemesisFiatLoad is newFiatLoad with the cluster's processor secret (the
// gateways' data directory holds no generated one).
func nemesisFiatLoad(t *testing.T, p *harness.Platform, secret string, n int, each int64) *fiatLoad {
	t.Helper()
	l := &fiatLoad{p: p, client: &http.Client{Timeout: 20 * time.Second},
		results: map[string]transferOutcome{}, byKey: map[string][]byte{}}
	for i := 0; i < n; i++ {
		u := p.Register(t, fmt.Sprintf("nemesis-fiat%d", i))
		w := fiatCreateWallet(t, p, u, "KZT")
		fiatDeposit(t, p, secret, u, w, each)
		l.users = append(l.users, u)
		l.wallets = append(l.wallets, w)
		l.deposited += each
	}
	return l
}

// keyedUntil posts body with key until the answer is neither a transport
// error nor a 503, or until passes; it returns the last answer.
func keyedUntil(client *http.Client, url, token, key string, body []byte, until time.Time) (int, []byte, error) {
	for {
		status, raw, err := postKeyed(client, url, token, key, body)
		if (err == nil && status != http.StatusServiceUnavailable) || time.Now().After(until) {
			return status, raw, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// nemesisDeposit creates a deposit and posts the processor's signed
// success event (its event id is the processor's idempotency), each retried
// on a 503; a credited deposit counts in the load's deposits.
func nemesisDeposit(t *testing.T, l *fiatLoad, client *http.Client, secret string, u int, amount int64, until time.Time) bool {
	body, _ := json.Marshal(map[string]any{"walletId": l.wallets[u], "amount": amount})
	status, raw, err := keyedUntil(client, l.p.BaseURL+"/api/fiat/deposit", l.users[u].Token, "dep-"+ksuid.New().String(), body, until)
	if err != nil || status != http.StatusCreated {
		t.Errorf("deposit: %d %s %v", status, raw, err)
		return false
	}
	var dep struct {
		DepositID string `json:"depositId"`
	}
	_ = json.Unmarshal(raw, &dep)
	ev := fiatEvent(t, "evt_"+ksuid.New().String(), dep.DepositID, amount, "kzt")
	for {
		signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: ev, Secret: secret})
		req, _ := http.NewRequest(http.MethodPost, l.p.BaseURL+"/api/fiat/deposit/webhook", strings.NewReader(string(ev)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Stripe-Signature", signed.Header)
		resp, err := client.Do(req)
		st := 0
		if err == nil {
			st = resp.StatusCode
			resp.Body.Close()
		}
		if st == http.StatusOK {
			l.mu.Lock()
			l.deposited += amount
			l.mu.Unlock()
			return true
		}
		if (err == nil && st != http.StatusServiceUnavailable) || time.Now().After(until) {
			t.Errorf("deposit webhook: %d %v", st, err)
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// nemesisWithdraw withdraws with an Idempotency-Key, retried on a 503; an
// acknowledged one counts in the load's withdrawals.
func nemesisWithdraw(t *testing.T, l *fiatLoad, client *http.Client, u int, amount int64, key string, until time.Time) bool {
	body, _ := json.Marshal(map[string]any{"walletId": l.wallets[u], "amount": amount, "destination": "KZ000000000000004321"})
	status, raw, err := keyedUntil(client, l.p.BaseURL+"/api/fiat/withdraw", l.users[u].Token, key, body, until)
	switch {
	case err == nil && status == http.StatusCreated:
		l.mu.Lock()
		l.withdrawn += amount
		l.mu.Unlock()
		return true
	case err == nil && status == http.StatusBadRequest && strings.Contains(string(raw), "insufficient_balance"):
		return false
	}
	t.Errorf("withdraw %s: %d %s %v", key, status, raw, err)
	return false
}

// nemesisCheckReputation: for every user, score = SUM(weight) of their
// events and event_count = their count.
func nemesisCheckReputation(t *testing.T, db *pgxpool.Pool) {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT coalesce(s.user_id, e.user_id), coalesce(s.score, 0), coalesce(e.total, 0),
		coalesce(s.event_count, 0), coalesce(e.n, 0)
		FROM reputation_scores s
		FULL JOIN (SELECT user_id, sum(weight) AS total, count(*) AS n FROM reputation_events GROUP BY user_id) e USING (user_id)
		WHERE coalesce(s.score, 0) <> coalesce(e.total, 0) OR coalesce(s.event_count, 0) <> coalesce(e.n, 0)`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var user string
		var score, sum, count, n int64
		if err := rows.Scan(&user, &score, &sum, &count, &n); err != nil {
			t.Fatal(err)
		}
		t.Errorf("reputation of %s: score %d, its events sum to %d; event_count %d, it has %d events", user, score, sum, count, n)
	}
}

// nemesisBodyLimitThroughProxy: a body over 1 MiB through HAProxy is
// answered 400 payload_too_large, as it is straight from a gateway — sent
// whole (the gateway answers on the Content-Length, then reads and
// discards the rest: HAProxy 2.6 does not drain a request answered early,
// and a close with the body still arriving reset the connection) or only
// announced.
func nemesisBodyLimitThroughProxy(t *testing.T, p *harness.Platform) {
	t.Helper()
	hc := &http.Client{Timeout: 20 * time.Second}
	bad := 0
	for i, size := range []int{1<<20 + 1, 2 << 20, 8 << 20, 1<<20 + 1, 2 << 20, 8 << 20, 1<<20 + 1, 2 << 20, 8 << 20, 4 << 20} {
		resp, err := hc.Post(p.BaseURL+"/api/auth/register", "application/json", strings.NewReader(strings.Repeat(" ", size)))
		if err != nil {
			bad++
			t.Errorf("body %d of %d bytes through the proxy: %v", i, size, err)
			continue
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(raw), `"payload_too_large"`) {
			bad++
			t.Errorf("body %d of %d bytes through the proxy: %d %s", i, size, resp.StatusCode, raw)
		}
	}
	status, _, body := announceBody(t, p.BaseURL, http.MethodPost, "/api/auth/register", "", 2<<20)
	if status != http.StatusBadRequest || !strings.Contains(body, `"payload_too_large"`) {
		t.Errorf("announced body over 1 MiB through the proxy: %d %s", status, body)
	}
	t.Logf("10 bodies over 1 MiB through the proxy: %d not answered 400 payload_too_large", bad)
}

// nemesisWebhooks waits (up to 60 s) until every settled transfer of the
// subscribed user (sender or recipient) reached the endpoint, and returns
// what the endpoint received — each delivery verified as it arrived — and
// what it should have.
func nemesisWebhooks(t *testing.T, hook *hookReceiver, l *fiatLoad) *history.Webhooks {
	t.Helper()
	w := &history.Webhooks{Want: map[string]bool{}}
	for id, r := range l.results {
		if r.from == 0 || r.to == 0 {
			w.Want[id] = true
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		w.Deliveries = w.Deliveries[:0]
		got := map[string]bool{}
		for _, h := range hook.all() {
			var body struct {
				Data struct {
					TxID string `json:"txId"`
				} `json:"data"`
			}
			_ = json.Unmarshal(h.body, &body)
			w.Deliveries = append(w.Deliveries, history.Delivery{EventID: h.header.Get("webhook-id"), Subject: body.Data.TxID,
				Signed: h.signed, At: h.at})
			got[body.Data.TxID] = true
		}
		missing := 0
		for id := range w.Want {
			if !got[id] {
				missing++
			}
		}
		if missing == 0 || time.Now().After(deadline) {
			t.Logf("webhooks: %d transfers of the subscribed user, %d deliveries, %d missing", len(w.Want), len(w.Deliveries), missing)
			return w
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// nemesisState is what Postgres holds of the load after the run, for the
// history checker: the transfers, withdrawals and donations present by id
// with their ledger entries, the fiat conservation, and the webhooks.
func nemesisState(t *testing.T, db *pgxpool.Pool, fiat *fiatLoad, dons *donationLoad, hooks *history.Webhooks) history.State {
	t.Helper()
	ctx := context.Background()
	family := func(name string, match func(history.Op) bool, ledgerKind, appliedSQL string, args ...any) history.Family {
		f := history.Family{Name: name, Match: match, Applied: map[string]int{}, Ledger: map[string]int{}}
		rows, err := db.Query(ctx, appliedSQL, args...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			f.Applied[id]++
			ids = append(ids, id)
		}
		rows.Close()
		rows, err = db.Query(ctx, `SELECT source_id, count(*) FROM ledger_entries WHERE kind = $1 AND source_id = ANY($2) GROUP BY source_id`,
			ledgerKind, ids)
		if err != nil {
			t.Fatalf("%s ledger: %v", name, err)
		}
		for rows.Next() {
			var id string
			var n int
			if err := rows.Scan(&id, &n); err != nil {
				t.Fatal(err)
			}
			f.Ledger[id] = n
		}
		rows.Close()
		return f
	}
	var balances, fees int64
	for i, u := range fiat.users {
		balances += fiatBalance(t, fiat.p, u, fiat.wallets[i])
	}
	for _, r := range fiat.results {
		fees += r.fee
	}
	return history.State{
		Families: []history.Family{
			family("transfer", history.PathIs("/api/fiat/transfer"), schemas.LedgerKindTransfer,
				`SELECT id FROM fiat_transactions WHERE kind = 'transfer' AND from_wallet = ANY($1)`, fiat.wallets),
			family("withdrawal", history.PathIs("/api/fiat/withdraw"), schemas.LedgerKindWithdrawal,
				`SELECT id FROM fiat_transactions WHERE kind = 'withdrawal' AND from_wallet = ANY($1)`, fiat.wallets),
			family("donation", history.PathMatches("/api/charity/campaigns/"+dons.camp.ID, "/donations"), schemas.LedgerKindDonation,
				`SELECT id FROM charity_donations WHERE campaign_id = $1`, dons.camp.ID),
		},
		Conservation: []history.Equation{{Name: "fiat balances + fees + withdrawn = deposited",
			Left: balances + fees + fiat.withdrawn, Right: fiat.deposited}},
		Webhooks: hooks,
	}
}

// nemesisCheckHistory runs the history checker and reports its verdict:
// each violation is an error; per fault, the 503s in its window and, for a
// primary kill, the RTO (kill to the next 2xx write).
func nemesisCheckHistory(t *testing.T, h history.History, s history.State, faults []*nemesisFault) {
	t.Helper()
	v := history.Check(h, s, nemesisRecovery)
	for _, x := range v.Violations {
		t.Errorf("history: %s", x)
	}
	var rtos []time.Duration
	nemesisRTOs(h, faults)
	for _, f := range faults {
		line := fmt.Sprintf("fault %-18s %-34s at +%5.1fs for %5.1fs (window to +%5.1fs): %d answers 503 or cut", f.kind, f.member,
			f.start.Sub(faults[0].start).Seconds(), f.end.Sub(f.start).Seconds(),
			f.end.Add(nemesisRecovery[f.kind]).Sub(faults[0].start).Seconds(), f.unavailable)
		if f.unavailable > 0 {
			line += fmt.Sprintf(" from %+.1fs to %+.1fs", f.firstBad.Sub(f.start).Seconds(), f.lastBad.Sub(f.start).Seconds())
		}
		switch {
		case f.rto < 0:
			t.Errorf("no write answered 2xx after the %s at %s", f.kind, f.start.Format(time.StampMilli))
		default:
			line += fmt.Sprintf(", RTO %.1fs", f.rto.Seconds())
			if f.kind == "primary-kill" {
				rtos = append(rtos, f.rto)
			}
		}
		if f.note != "" {
			line += " (" + f.note + ")"
		}
		t.Log(line)
	}
	nemesisRTOTable(t, faults)
	sort.Slice(rtos, func(i, j int) bool { return rtos[i] < rtos[j] })
	if len(rtos) > 0 {
		t.Logf("RTO of the primary kills (start to the first 2xx write after their last 503) median %.1fs, max %.1fs over %d kills (target <= 15s)",
			rtos[len(rtos)/2].Seconds(), rtos[len(rtos)-1].Seconds(), len(rtos))
		if rtos[len(rtos)-1] > 15*time.Second {
			t.Errorf("RTO %.1fs above the 15 s target", rtos[len(rtos)-1].Seconds())
		}
	}
	verdict := "passed"
	if v.Failed() {
		verdict = fmt.Sprintf("FAILED with %d violations", len(v.Violations))
	}
	t.Logf("history checker: %d requests, %d faults: %s", len(h.Ops), len(h.Faults), verdict)
}

// nemesisFault is one injected fault: its kind, the member, when it began
// and when the member was back.
type nemesisFault struct {
	kind, member string
	start, end   time.Time
	rto          time.Duration
	note         string // what the fault saw (a promotion, the fence)
	overlap      bool   // injected with another one
	// the 503s and cut answers it caused (nemesisRTOs), the first and last
	unavailable       int
	firstBad, lastBad time.Time
}

// nemesisRTOs gives each fault its unavailable answers — each 503 or cut
// answer goes to the latest fault started before it whose window holds it —
// and its RTO: the start to the first write sent after its last unavailable
// answer and answered 2xx (0 when clients saw nothing; -1 when no write
// succeeded after it).
func nemesisRTOs(h history.History, faults []*nemesisFault) {
	for _, o := range h.Ops {
		if o.Status != http.StatusServiceUnavailable && o.Status != 0 {
			continue
		}
		var best *nemesisFault
		for _, f := range faults {
			if !o.End.Before(f.start) && !o.End.After(f.end.Add(nemesisRecovery[f.kind])) && (best == nil || f.start.After(best.start)) {
				best = f
			}
		}
		if best == nil {
			continue
		}
		best.unavailable++
		if best.firstBad.IsZero() || o.End.Before(best.firstBad) {
			best.firstBad = o.End
		}
		if o.End.After(best.lastBad) {
			best.lastBad = o.End
		}
	}
	for _, f := range faults {
		since := f.start
		if f.unavailable > 0 {
			since = f.lastBad
		}
		switch ok := h.FirstWriteOK(since); {
		case ok.IsZero():
			f.rto = -1
		case f.unavailable == 0:
			f.rto = 0
		default:
			f.rto = ok.Sub(f.start)
		}
	}
}

type nemesis struct {
	c      *harness.LocalCluster
	rng    *rand.Rand // under mu (overlapping faults draw from it)
	rec    *history.Recorder
	faults []*nemesisFault
	// addrs is the cluster's address layout (cluster.sh addrs)
	addrs map[string]harness.Addr
	// fenceAcked counts the probe writes each isolated primary acknowledged
	fenceAcked map[int]int
	// everyKind: every kind once (shuffled) before the deadline counts
	everyKind bool
	mu, upMu  sync.Mutex
}

var nemesisKinds = []string{"gateway-kill", "consumer-kill", "consumer-stop", "primary-kill", "relay-lock",
	"broker-kill", "machine-kill", "postgres-both-down", "etcd-cut-primary", "replication-cut",
	"gateway-broker-cut", "consumer-pg-cut", "relay-broker-cut", "pg-loss", "clock-skew", "overlap"}

// run injects faults, one at a time (an "overlap" is two at once): the
// kinds in a seeded order, then random kinds, until until — every kind once
// first when everyKind (NEMESIS_EVERY_KIND), whatever until says; each is
// recovered (the member restored, Postgres replicated again) before the next.
func (n *nemesis) run(t *testing.T, until time.Time) {
	t.Helper()
	kinds := nemesisKinds
	order := append([]string(nil), kinds...)
	n.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	for i := 0; (n.everyKind && i < len(order)) || time.Now().Before(until); i++ {
		kind := kinds[n.intn(len(kinds))]
		if i < len(order) {
			kind = order[i]
		}
		time.Sleep(time.Duration(1000+n.intn(2000)) * time.Millisecond)
		var fs []*nemesisFault
		if kind == "overlap" {
			fs = n.overlap(t)
		} else if f := n.inject(t, kind); f != nil {
			fs = append(fs, f)
		}
		for _, f := range fs {
			n.faults = append(n.faults, f)
			n.rec.Fault(history.Fault{Kind: f.kind, Member: f.member, Start: f.start, End: f.end})
			t.Logf("fault %s %s: %.1fs %s", f.kind, f.member, f.end.Sub(f.start).Seconds(), f.note)
		}
	}
}

func (n *nemesis) consumer() string {
	var cs []string
	for _, m := range n.c.Members() {
		if !strings.HasPrefix(m, "gateway-") && !strings.HasPrefix(m, "relay-") {
			cs = append(cs, m)
		}
	}
	sort.Strings(cs)
	return cs[n.rng.IntN(len(cs))]
}

func (n *nemesis) inject(t *testing.T, kind string) *nemesisFault {
	t.Helper()
	f := &nemesisFault{kind: kind}
	if n.injectLink(t, f) {
		return f
	}
	switch kind {
	case "gateway-kill":
		f.member = fmt.Sprintf("gateway-%d", 1+n.intn(2))
		f.start = time.Now()
		if err := n.c.Signal(f.member, syscall.SIGKILL); err != nil {
			t.Fatalf("kill %s: %v", f.member, err)
		}
		time.Sleep(time.Duration(500+n.intn(2500)) * time.Millisecond)
		n.up()
	case "consumer-kill":
		n.mu.Lock()
		f.member = n.consumer()
		n.mu.Unlock()
		f.start = time.Now()
		if err := n.c.Signal(f.member, syscall.SIGKILL); err != nil {
			t.Fatalf("kill %s: %v", f.member, err)
		}
		time.Sleep(time.Duration(500+n.intn(2500)) * time.Millisecond)
		n.up()
	case "consumer-stop":
		// A zombie: it wakes after the group moved its partitions.
		n.mu.Lock()
		f.member = n.consumer()
		n.mu.Unlock()
		f.start = time.Now()
		if err := n.c.Signal(f.member, syscall.SIGSTOP); err != nil {
			t.Fatalf("stop %s: %v", f.member, err)
		}
		time.Sleep(nemesisSessionTimeout + time.Duration(2000+n.intn(3000))*time.Millisecond)
		if err := n.c.Signal(f.member, syscall.SIGCONT); err != nil {
			t.Fatalf("continue %s: %v", f.member, err)
		}
		n.up()
	case "primary-kill":
		// Only with a synchronous standby to promote.
		harness.Eventually(t, 90*time.Second, "a synchronous standby before the primary kill", n.c.Replicated)
		i := n.c.Primary()
		pid := n.c.PostmasterPid(i)
		if pid <= 0 {
			t.Fatalf("no postmaster pid for member %d", i)
		}
		f.member = fmt.Sprintf("postgres pg%d", i+1)
		f.start = time.Now()
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatalf("kill postmaster %d: %v", pid, err)
		}
		harness.Eventually(t, 60*time.Second, "the standby promoted", func() bool { p := n.c.Primary(); return p >= 0 && p != i })
		harness.Eventually(t, 120*time.Second, "the old primary back as synchronous standby", n.c.Replicated)
		n.up()
	case "relay-lock":
		f.member = "relay lock"
		f.start = time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		found, err := n.c.TerminateRelayLock(ctx)
		cancel()
		if err != nil {
			t.Logf("terminate the relay's lock connection: %v", err)
			return nil
		}
		if !found {
			t.Logf("no relay held the outbox lock")
			return nil
		}
		time.Sleep(2 * time.Second)
	}
	f.end = time.Now()
	return f
}

// donationLoad is a campaign, funded donors and the donations answered 201
// (by donation id, with their amounts).
type donationLoad struct {
	p      *harness.Platform
	camp   charityCampaign
	donors []harness.User
	wallet []string

	mu       sync.Mutex
	answered map[string]int64
	paid     map[string]bool
	retries  atomic.Int64
}

func newDonationLoad(t *testing.T, p *harness.Platform, secret, prefix string, n int) *donationLoad {
	t.Helper()
	l := &donationLoad{p: p, answered: map[string]int64{}, paid: map[string]bool{},
		camp: charityActiveCampaign(t, p, p.Register(t, prefix+"-organizer"), prefix, 1_000_000_000)}
	for i := 0; i < n; i++ {
		u, w := charityFundedDonor(t, p, secret, fmt.Sprintf("%s-donor-%d", prefix, i), 10_000_000)
		l.donors, l.wallet = append(l.donors, u), append(l.wallet, w)
	}
	return l
}

// send donates from donor i%n with key, retrying on a 503 or a transport
// error until answered or until passes.
func (l *donationLoad) send(t *testing.T, client *http.Client, key string, i int, until time.Time) {
	d := i % len(l.donors)
	amount := schemas.DonationReputationMinKzt + int64(i%100)
	body, _ := json.Marshal(map[string]any{"walletId": l.wallet[d], "amountKzt": amount})
	for {
		status, raw, err := postKeyed(client, l.p.BaseURL+"/api/charity/campaigns/"+l.camp.ID+"/donations", l.donors[d].Token, key, body)
		if err == nil && status == http.StatusCreated {
			var res charityDonation
			if json.Unmarshal(raw, &res) != nil || res.DonationID == "" {
				t.Errorf("donation %s answered %s", key, raw)
				return
			}
			l.mu.Lock()
			l.answered[res.DonationID] = amount
			l.paid[l.donors[d].ID] = true
			l.mu.Unlock()
			return
		}
		if (err == nil && status != http.StatusServiceUnavailable) || time.Now().After(until) {
			t.Errorf("donation %s: %d %s %v", key, status, raw, err)
			return
		}
		l.retries.Add(1)
		time.Sleep(100 * time.Millisecond)
	}
}

func (l *donationLoad) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.answered)
}

// check: the campaign's donation rows are exactly the answered donations,
// its total is their sum, each has one ledger entry, and charity-donor
// reputation was counted once per donor and day.
func (l *donationLoad) check(t *testing.T, db *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	var rows, entries int
	var raised, sum int64
	if err := db.QueryRow(ctx, `SELECT count(*), coalesce(sum(amount_kzt), 0) FROM charity_donations WHERE campaign_id = $1`, l.camp.ID).Scan(&rows, &sum); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `SELECT raised_kzt FROM charity_campaigns WHERE id = $1`, l.camp.ID).Scan(&raised); err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, a := range l.answered {
		want += a
	}
	if rows != len(l.answered) || sum != want || raised != want {
		t.Errorf("%d donation rows summing %d, campaign raised %d; %d donations answered 201 summing %d",
			rows, sum, raised, len(l.answered), want)
	}
	if err := db.QueryRow(ctx, `SELECT count(*) FROM ledger_entries WHERE kind = $1 AND source_id = ANY($2)`,
		schemas.LedgerKindDonation, keysOf(l.answered)).Scan(&entries); err != nil || entries != len(l.answered) {
		t.Errorf("%d donation ledger entries for %d donations (%v)", entries, len(l.answered), err)
	}
	var donorEvents, donorDays int
	// The donors give to this campaign only.
	if err := db.QueryRow(ctx, `SELECT (SELECT count(*) FROM reputation_events WHERE kind = $1),
		(SELECT count(DISTINCT (donor_user_id, (created_at AT TIME ZONE 'UTC')::date)) FROM charity_donations WHERE campaign_id = $2)`,
		schemas.RepKindCharityDonor, l.camp.ID).Scan(&donorEvents, &donorDays); err != nil || donorEvents != donorDays || donorDays < len(l.paid) {
		t.Errorf("%d charity-donor events for %d donors' days of one campaign (%d donors; %v)", donorEvents, donorDays, len(l.paid), err)
	}
}

// maskLoad is a few masks with limits the load never reaches, and the
// charges answered (by payment reference: authorized or declined).
type maskLoad struct {
	p     *harness.Platform
	users []harness.User
	masks []maskView

	mu      sync.Mutex
	answers map[string]chargeView // "mask/ref" -> answer
}

func newMaskLoad(t *testing.T, p *harness.Platform, n int) *maskLoad {
	t.Helper()
	l := &maskLoad{p: p, answers: map[string]chargeView{}}
	for i := 0; i < n; i++ {
		u := p.Register(t, fmt.Sprintf("nemesis-mask%d", i))
		l.users = append(l.users, u)
		l.masks = append(l.masks, createMask(t, p, u.Token, map[string]any{"kind": "merchant-locked", "lockedToMerchant": "Shop",
			"spendLimitCents": 1_000_000_000, "currency": "USD"}))
	}
	return l
}

// send charges mask i%n with ref (also the Idempotency-Key), retrying on a
// 503 until answered or until passes.
func (l *maskLoad) send(t *testing.T, client *http.Client, ref string, i int, until time.Time) {
	m := i % len(l.masks)
	body, _ := json.Marshal(chargeBody(l.masks[m].ID, ref, int64(100+i%900), "Shop", "retail"))
	status, raw, err := keyedUntil(client, l.p.BaseURL+"/api/mask/charges", l.users[m].Token, ref, body, until)
	if err != nil || (status != http.StatusCreated && status != http.StatusOK && status != http.StatusPaymentRequired) {
		t.Errorf("mask charge %s: %d %s %v", ref, status, raw, err)
		return
	}
	var v chargeView
	if json.Unmarshal(raw, &v) != nil {
		t.Errorf("mask charge %s answered %s", ref, raw)
		return
	}
	if v.Charge != nil {
		v = *v.Charge
	}
	l.mu.Lock()
	l.answers[l.masks[m].ID+"/"+ref] = v
	l.mu.Unlock()
}

func (l *maskLoad) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.answers)
}

// check: the charge rows are exactly the answered charges, each with the
// answered status, and each mask's remaining limit is its limit less its
// authorized charges.
func (l *maskLoad) check(t *testing.T, db *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	rows, err := db.Query(ctx, `SELECT mask_id, payment_ref, status, amount_cents FROM mask_charges WHERE mask_id = ANY($1)`, l.maskIDs())
	if err != nil {
		t.Fatal(err)
	}
	spent := map[string]int64{}
	seen := 0
	for rows.Next() {
		var mask, ref, status string
		var amount int64
		if err := rows.Scan(&mask, &ref, &status, &amount); err != nil {
			t.Fatal(err)
		}
		seen++
		a, ok := l.answers[mask+"/"+ref]
		if !ok || a.Status != status {
			t.Errorf("mask charge %s/%s is %s in Postgres, answered %+v", mask, ref, status, a)
		}
		if status == "authorized" {
			spent[mask] += amount
		}
	}
	rows.Close()
	if seen != len(l.answers) {
		t.Errorf("%d mask charge rows for %d answered charges", seen, len(l.answers))
	}
	for _, m := range l.masks {
		var remaining int64
		if err := db.QueryRow(ctx, `SELECT remaining_cents FROM masks WHERE id = $1`, m.ID).Scan(&remaining); err != nil {
			t.Fatal(err)
		}
		if remaining != m.SpendLimitCents-spent[m.ID] {
			t.Errorf("mask %s: remaining %d, limit %d less authorized %d = %d", m.ID, remaining, m.SpendLimitCents, spent[m.ID], m.SpendLimitCents-spent[m.ID])
		}
	}
}

func (l *maskLoad) maskIDs() []string {
	var out []string
	for _, m := range l.masks {
		out = append(out, m.ID)
	}
	return out
}
