package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/broker"
)

// TestScaleOutAcrossProcesses runs the split deployment against one
// Kafka-protocol broker over TCP (kfake started in this test process, with
// every topic of topics.All): two `platform gateway` processes, two
// `platform consume fiat-applier` processes and `platform relay`. Transfers
// go through both gateways (a retry goes through the other one); one fiat
// consumer is SIGKILLed mid-load. The group rebalances onto the survivor
// and nothing is lost or applied twice: every acknowledged transfer is in
// the sender's and the recipient's history exactly once with its
// transaction id, no transfer is
// there twice, balances plus the fee wallet equal the deposits, and the
// transfers settle.
func TestScaleOutAcrossProcesses(t *testing.T) {
	t.Parallel() // a long test: see "Parallel tests" in main_test.go
	broker, err := broker.Start(t.TempDir(), harness.FreePort(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(broker.Close)
	brokers := strings.Join(broker.Addrs(), ",")

	c := harness.NewCluster(t, brokers, map[string]string{"COMMAND_TIMEOUT": "3s"})
	c.Run("migrate")
	gws := []*harness.Platform{c.Gateway(), c.Gateway()}
	relay := c.Relay()
	fiat1 := c.Consume(topics.GroupFiat)
	fiat2 := c.Consume(topics.GroupFiat)

	kcl, err := topics.NewClient(broker.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kcl.Close)
	admin := kadm.NewClient(kcl)
	members := func() int {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		gs, err := admin.DescribeGroups(ctx, topics.GroupFiat)
		if err != nil {
			return -1
		}
		g, ok := gs[topics.GroupFiat]
		if !ok || g.Err != nil || g.State != "Stable" {
			return -1
		}
		return len(g.Members)
	}
	harness.Eventually(t, 60*time.Second, "both fiat consumers in the group", func() bool { return members() == 2 })

	// Users, wallets and deposits, alternating gateways.
	const nUsers = 12
	const deposit = int64(1_000_000)
	secret := c.Env["PROCESSOR_WEBHOOK_SECRET"]
	users := make([]harness.User, nUsers)
	wallets := make([]string, nUsers)
	for i := range users {
		gw := gws[i%2]
		users[i] = gw.Register(t, "scaleout")
		wallets[i] = fiatCreateWallet(t, gw, users[i], "KZT")
		fiatDeposit(t, gws[(i+1)%2], secret, users[i], wallets[i], deposit)
	}
	for i := range users {
		harness.Eventually(t, 30*time.Second, "deposit credited", func() bool {
			return fiatBalance(t, gws[i%2], users[i], wallets[i]) == deposit
		})
	}
	// Both consumers own partitions and applied commands before the kill.
	harness.Eventually(t, 30*time.Second, "both fiat consumers applied commands", func() bool {
		return consumedRecords(fiat1) > 0 && consumedRecords(fiat2) > 0
	})

	// Load: workers send transfers with unique keys (the memo carries the
	// key), retrying 503s with the same key through the other gateway.
	const workers, perWorker = 6, 40
	type sent struct {
		key, txID string
		from      int
		fee       int64
		status    int
	}
	var (
		mu      sync.Mutex
		all     []sent
		acked   atomic.Int64
		retried atomic.Int64
		wg      sync.WaitGroup
	)
	hc := &http.Client{Timeout: 30 * time.Second}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for i := 0; i < perWorker; i++ {
				from := rng.IntN(nUsers)
				to := (from + 1 + rng.IntN(nUsers-1)) % nUsers
				key := fmt.Sprintf("so-%d-%d", w, i)
				body, _ := json.Marshal(map[string]any{"fromWalletId": wallets[from], "toEmail": users[to].Email,
					"amountKzt": 100 + rng.Int64N(5000), "memo": key})
				s := sent{key: key, from: from}
				deadline := time.Now().Add(60 * time.Second)
				for attempt := 0; ; attempt++ {
					st, raw, err := postKeyed(hc, gws[(w+i+attempt)%2].BaseURL+"/api/fiat/transfer", users[from].Token, key, body)
					s.status = st
					if err == nil && st == http.StatusOK {
						var out struct {
							TransactionID string `json:"transactionId"`
							FeeKzt        int64  `json:"feeKzt"`
						}
						if json.Unmarshal(raw, &out) == nil {
							s.txID, s.fee = out.TransactionID, out.FeeKzt
						}
						acked.Add(1)
						break
					}
					if (err != nil || st == http.StatusServiceUnavailable) && time.Now().Before(deadline) {
						retried.Add(1)
						time.Sleep(50 * time.Millisecond)
						continue
					}
					break
				}
				mu.Lock()
				all = append(all, s)
				mu.Unlock()
			}
		}()
	}

	// Mid-load: SIGKILL one fiat consumer; the survivor takes its partitions.
	harness.Eventually(t, 60*time.Second, "a third of the transfers acknowledged", func() bool {
		return acked.Load() >= workers*perWorker/3
	})
	fiat1.Kill()
	survivorBefore := consumedRecords(fiat2)
	t.Logf("killed one fiat consumer after %d acknowledged transfers", acked.Load())
	harness.Eventually(t, 45*time.Second, "the group rebalanced onto one consumer", func() bool { return members() == 1 })
	wg.Wait()
	if after := consumedRecords(fiat2); after <= survivorBefore {
		t.Errorf("the surviving consumer applied nothing after the kill (%.0f records before, %.0f after)", survivorBefore, after)
	}

	// Most transfers settled (here: every one, given 60 s of retries).
	var settled int
	ackedByKey := map[string]sent{}
	for _, s := range all {
		if s.status == http.StatusOK {
			settled++
			ackedByKey[s.key] = s
			if s.txID == "" {
				t.Errorf("transfer %s acknowledged without a transaction id", s.key)
			}
		} else {
			t.Errorf("transfer %s ended with status %d", s.key, s.status)
		}
	}
	t.Logf("%d of %d transfers settled, %d retries (503 or transport, same key)", settled, len(all), retried.Load())
	if settled < len(all)*95/100 {
		t.Fatalf("only %d of %d transfers settled", settled, len(all))
	}

	// Exactly once: every outgoing transfer in the histories, by key.
	seen, received := map[string][]string{}, map[string][]string{}
	var historyFees, balances int64
	for i, u := range users {
		for _, e := range scaleoutHistory(t, gws[i%2], u) {
			if e.Kind == "transfer" && e.Direction == "out" {
				seen[e.Memo] = append(seen[e.Memo], e.ID)
				historyFees += e.FeeKzt
			}
			if e.Kind == "transfer" && e.Direction == "in" {
				received[e.Memo] = append(received[e.Memo], e.ID)
			}
		}
		balances += fiatBalance(t, gws[(i+1)%2], u, wallets[i])
	}
	for key, ids := range seen {
		if len(ids) != 1 {
			t.Errorf("transfer %s applied %d times: %v", key, len(ids), ids)
		}
	}
	for key, s := range ackedByKey {
		if ids := seen[key]; len(ids) != 1 || ids[0] != s.txID {
			t.Errorf("acknowledged transfer %s (tx %s) is in the sender's history as %v", key, s.txID, ids)
		}
		if ids := received[key]; len(ids) != 1 || ids[0] != s.txID {
			t.Errorf("acknowledged transfer %s (tx %s) is in the recipient's history as %v", key, s.txID, ids)
		}
	}
	if len(seen) != len(ackedByKey) {
		t.Errorf("history holds %d transfers, %d were acknowledged", len(seen), len(ackedByKey))
	}

	// Conservation: balances + the fee wallet = deposits; fee wallet = fees.
	conn, err := pgx.Connect(context.Background(), c.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var feeWallet int64
	if err := conn.QueryRow(context.Background(), `SELECT balance FROM fiat_wallets WHERE id = 'fee-KZT'`).Scan(&feeWallet); err != nil {
		t.Fatal(err)
	}
	if balances+feeWallet != nUsers*deposit {
		t.Errorf("balances %d + fee wallet %d = %d, deposited %d", balances, feeWallet, balances+feeWallet, nUsers*deposit)
	}
	if feeWallet != historyFees {
		t.Errorf("fee wallet %d, fees in history %d", feeWallet, historyFees)
	}
	// `platform relay` serves its metrics: platform_outbox_published_total
	// is the one signal that events stalled (the RelayNotPublishing alert).
	if n := metricSum(relay, "platform_outbox_published_total"); n == 0 {
		t.Errorf("the relay's metrics listener shows no published event (or does not answer)")
	}
}

// postKeyed posts a JSON body with a bearer token and an Idempotency-Key.
func postKeyed(hc *http.Client, url, token, key string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Idempotency-Key", key)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, err = buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.Bytes(), err
}

// consumedRecords sums platform_consumer_records_total on a consumer
// process's metrics listener (0 when it does not answer).
func consumedRecords(p *harness.Platform) float64 {
	return metricSum(p, "platform_consumer_records_total")
}

// metricSum sums the series of one metric on a process's metrics listener
// (0 when it does not answer).
func metricSum(p *harness.Platform, name string) float64 {
	resp, err := http.Get("http://" + p.MetricsAddr + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var total float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line != name && !strings.HasPrefix(line, name+" ") && !strings.HasPrefix(line, name+"{") {
			continue
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			total += v
		}
	}
	return total
}

type scaleoutEntry struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	Direction string `json:"direction"`
	Memo      string `json:"memo"`
	FeeKzt    int64  `json:"feeKzt"`
}

// scaleoutHistory pages through a user's whole transaction history.
func scaleoutHistory(t *testing.T, p *harness.Platform, u harness.User) []scaleoutEntry {
	t.Helper()
	var out []scaleoutEntry
	cursor := ""
	for {
		path := "/api/fiat/transactions?limit=200"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		r := p.Get(t, path, u.Token)
		if r.Status != http.StatusOK {
			t.Fatalf("transactions: %d %s", r.Status, r.Body)
		}
		var page struct {
			Items      []scaleoutEntry `json:"items"`
			NextCursor *string         `json:"nextCursor"`
		}
		r.Decode(t, &page)
		out = append(out, page.Items...)
		if page.NextCursor == nil {
			return out
		}
		cursor = *page.NextCursor
	}
}
