package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// TestMixedLoadSurvivesPostgresCrashAndKill runs fiat transfers, donations
// and trade transfers at once on a platform whose Postgres is its own;
// a third of the way in, Postgres is shut down immediately (no checkpoint:
// the restart replays the WAL) and started again; two thirds in, the
// platform is killed (SIGKILL) and restarted. Every request is retried with
// its Idempotency-Key until answered. Then: every acknowledged transfer,
// donation and trade transfer is applied exactly once (balances, histories,
// the campaign total), each has its one ledger entry and the chain is
// valid, and reputation is counted once: wallet-active once a day per sender
// and receiver of 10 KZT or more,
// one charity-donor per donor (their donations share a campaign and a day).
func TestMixedLoadSurvivesPostgresCrashAndKill(t *testing.T) {
	t.Parallel() // a long test: see "Parallel tests" in main_test.go
	pg := startPrivatePostgres(t)
	p := harness.Start(t, harness.Options{DatabaseURL: pg.newDatabase(t)})
	secret := fiatSecret(t, p)

	const transfers, donations, trades = 900, 240, 180
	fiat := newFiatLoad(t, p, secret, 12, 1_000_000)
	trade := newTradeLoad(t, p, "fault-trade", 4, 50, trades, 13, 10_000_000)
	camp := charityActiveCampaign(t, p, p.Register(t, "fault-organizer"), "faults", 100_000_000)
	type donor struct {
		u harness.User
		w string
	}
	donors := make([]donor, 6)
	for i := range donors {
		u, w := charityFundedDonor(t, p, secret, fmt.Sprintf("fault-donor-%d", i), 1_000_000)
		donors[i] = donor{u, w}
	}

	crashAt, killAt := make(chan struct{}), make(chan struct{})
	var crashOnce, killOnce sync.Once
	// The donations and trade transfers come in thirds: the second third is
	// sent once the Postgres crash is due, the last once the kill is, so
	// that each kind meets both faults.
	gate := func(i, n int) {
		switch {
		case i >= 2*n/3:
			<-killAt
		case i >= n/3:
			<-crashAt
		}
	}
	deadline := time.Now().Add(150 * time.Second)
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		fiat.run(t, transfers, 24, 10, true, deadline, func(n int64) {
			switch n {
			case transfers / 3:
				crashOnce.Do(func() { close(crashAt) })
			case 2 * transfers / 3:
				killOnce.Do(func() { close(killAt) })
			}
		})
	}()

	var donationMu sync.Mutex
	answered := map[string]int64{} // donation id -> amount
	donorsPaid := map[string]bool{}
	var donationRetries, tradeRetries atomic.Int64
	client := &http.Client{Timeout: 20 * time.Second}
	go func() {
		defer wg.Done()
		onWorkers(donations, 6, func(i int) {
			gate(i, donations)
			d := donors[i%len(donors)]
			amount := schemas.DonationReputationMinKzt + int64(i)
			body, _ := json.Marshal(map[string]any{"walletId": d.w, "amountKzt": amount})
			key := fmt.Sprintf("fault-%s-%d", camp.ID, i)
			for {
				status, raw, err := postKeyed(client, p.BaseURL+"/api/charity/campaigns/"+camp.ID+"/donations", d.u.Token, key, body)
				if err == nil && status == http.StatusCreated {
					var res charityDonation
					if json.Unmarshal(raw, &res) != nil || res.DonationID == "" {
						t.Errorf("donation %d answered %s", i, raw)
						return
					}
					donationMu.Lock()
					answered[res.DonationID] = amount
					donorsPaid[d.u.ID] = true
					donationMu.Unlock()
					return
				}
				if (err == nil && status < 500 && status != http.StatusTooManyRequests) || time.Now().After(deadline) {
					t.Errorf("donation %d: %d %s %v", i, status, raw, err)
					return
				}
				donationRetries.Add(1)
				time.Sleep(100 * time.Millisecond)
			}
		})
	}()
	go func() {
		defer wg.Done()
		onWorkers(trades, 6, func(i int) {
			gate(i, trades)
			trade.send(client, i, fmt.Sprintf("fault-trade-%d", i), deadline, func() { tradeRetries.Add(1) })
		})
	}()

	<-crashAt
	pg.crash(t)
	time.Sleep(time.Second) // an outage the load runs into, not a blip
	pg.start(t)
	<-killAt
	firstLogs := p.Logs()
	p.Kill()
	p.Restart()
	wg.Wait()
	if t.Failed() {
		return
	}
	if fiat.retries.Load() == 0 {
		t.Fatal("no transfer was retried: the faults did not hit the load")
	}
	// The outage hit the money path: the fiat applier had a batch to apply
	// and failed it (then retried it until Postgres was back).
	var failedBatches int
	for _, line := range strings.Split(firstLogs, "\n") {
		if strings.Contains(line, `"batch failed, retrying"`) && strings.Contains(line, `"group":"fiat-applier"`) {
			failedBatches++
		}
	}
	if failedBatches == 0 {
		t.Fatal("the fiat applier never failed a batch: the Postgres crash did not hit the load")
	}
	t.Logf("%d fiat batch attempts failed during the outage; retries: %d transfers, %d donations, %d trade transfers",
		failedBatches, fiat.retries.Load(), donationRetries.Load(), tradeRetries.Load())

	fiat.check(t, transfers*7/10)
	fiat.checkDerived(t)
	accepted, _ := trade.check(t)
	if accepted < trades/2 {
		t.Fatalf("only %d of %d trade transfers accepted", accepted, trades)
	}

	ctx := context.Background()
	db, err := pgxpool.New(ctx, p.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	waitQuiet(t, p, db, topics.GroupFiat, topics.GroupLedger, topics.GroupReputation)
	var rows, entries int
	var raised, sum int64
	if err := db.QueryRow(ctx, `SELECT count(*), coalesce(sum(amount_kzt), 0) FROM charity_donations WHERE campaign_id = $1`, camp.ID).Scan(&rows, &sum); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `SELECT raised_kzt FROM charity_campaigns WHERE id = $1`, camp.ID).Scan(&raised); err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, a := range answered {
		want += a
	}
	if rows != len(answered) || sum != want || raised != want {
		t.Fatalf("%d donation rows summing %d, campaign raised %d; %d donations answered 201 summing %d",
			rows, sum, raised, len(answered), want)
	}
	if err := db.QueryRow(ctx, `SELECT count(*) FROM ledger_entries WHERE kind = $1 AND source_id = ANY($2)`,
		schemas.LedgerKindDonation, keysOf(answered)).Scan(&entries); err != nil || entries != len(answered) {
		t.Fatalf("%d donation ledger entries for %d donations (%v)", entries, len(answered), err)
	}
	var donorEvents, donorDays int
	if err := db.QueryRow(ctx, `SELECT (SELECT count(*) FROM reputation_events WHERE kind = $1),
		(SELECT count(DISTINCT (donor_user_id, (created_at AT TIME ZONE 'UTC')::date)) FROM charity_donations WHERE campaign_id = $2)`,
		schemas.RepKindCharityDonor, camp.ID).Scan(&donorEvents, &donorDays); err != nil || donorEvents != donorDays || donorDays < len(donorsPaid) {
		t.Fatalf("%d charity-donor events for %d donors' days of one campaign (%d donors; %v)", donorEvents, donorDays, len(donorsPaid), err)
	}
	t.Logf("%d transfers, %d donations, %d trade transfers applied once across a Postgres crash and a kill",
		len(fiat.results), len(answered), accepted)
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// onWorkers calls do(i) for every i below n, on workers goroutines, and
// returns when all are done.
func onWorkers(n, workers int, do func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				do(i)
			}
		}()
	}
	wg.Wait()
}
