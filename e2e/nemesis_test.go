package e2e

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/e2e/history"
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
	harness.NeedCluster(t)
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
	fiat := newFiatLoad(t, p, secret, 10, 2_000_000) // the cluster's secret: the gateways' data directory holds no generated one
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
