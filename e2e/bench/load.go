package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/ksuid"
	"github.com/stripe/stripe-go/v82/webhook"
)

type client struct {
	base string
	http *http.Client
}

func newClient(base string, concurrency int) *client {
	tr := &http.Transport{MaxIdleConns: concurrency * 2, MaxIdleConnsPerHost: concurrency * 2, IdleConnTimeout: time.Minute}
	return &client{base: base, http: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

// call sends a JSON request and decodes a JSON answer into out (when not nil).
func (c *client) call(method, path, token string, headers map[string]string, body any, out any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, raw, fmt.Errorf("%s %s: decode: %w", method, path, err)
		}
	}
	return resp.StatusCode, raw, nil
}

type account struct {
	email, token, walletID string
}

// setup registers users, creates their KZT wallets and funds each with
// deposit through POST /deposit and the processor's signed webhook.
func (c *client) setup(users int, deposit int64, secret string) ([]account, error) {
	accounts := make([]account, users)
	errs := make(chan error, users)
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	run := ksuid.New().String()[:8]
	for i := range accounts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			a, err := c.fund(fmt.Sprintf("bench-%s-%d@example.com", run, i), deposit, secret)
			if err != nil {
				errs <- err
				return
			}
			accounts[i] = a
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	// Deposits are credited by the consumer: wait until every balance shows.
	deadline := time.Now().Add(60 * time.Second)
	for _, a := range accounts {
		for {
			bal, err := c.balance(a)
			if err != nil {
				return nil, err
			}
			if bal == deposit {
				break
			}
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("wallet %s has %d after funding, want %d", a.walletID, bal, deposit)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return accounts, nil
}

func (c *client) fund(email string, deposit int64, secret string) (account, error) {
	var reg struct {
		Token string `json:"token"`
	}
	st, raw, err := c.call("POST", "/api/auth/register", "", nil, map[string]string{"email": email, "password": "bench-password-1"}, &reg)
	if err != nil || st != 201 {
		return account{}, fmt.Errorf("register: %d %s %v", st, raw, err)
	}
	var w struct {
		ID string `json:"id"`
	}
	st, raw, err = c.call("POST", "/api/fiat/wallets", reg.Token, nil, map[string]string{"currency": "KZT"}, &w)
	if err != nil || st != 201 {
		return account{}, fmt.Errorf("create wallet: %d %s %v", st, raw, err)
	}
	var d struct {
		DepositID string `json:"depositId"`
	}
	st, raw, err = c.call("POST", "/api/fiat/deposit", reg.Token, nil, map[string]any{"walletId": w.ID, "amount": deposit}, &d)
	if err != nil || st != 201 {
		return account{}, fmt.Errorf("deposit: %d %s %v", st, raw, err)
	}
	event, _ := json.Marshal(map[string]any{
		"id": "evt_" + ksuid.New().String(), "object": "event", "type": "payment_intent.succeeded",
		"api_version": "2024-06-20", "created": time.Now().Unix(),
		"data": map[string]any{"object": map[string]any{
			"id": "pi_" + ksuid.New().String(), "object": "payment_intent", "amount": deposit,
			"currency": "kzt", "status": "succeeded", "metadata": map[string]string{"depositId": d.DepositID},
		}},
	})
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: event, Secret: secret})
	req, _ := http.NewRequest("POST", c.base+"/api/fiat/deposit/webhook", bytes.NewReader(event))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Stripe-Signature", signed.Header)
	resp, err := c.http.Do(req)
	if err != nil {
		return account{}, fmt.Errorf("deposit webhook: %w", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		return account{}, fmt.Errorf("deposit webhook: %d %s", resp.StatusCode, body)
	}
	return account{email: email, token: reg.Token, walletID: w.ID}, nil
}

// balance reads the KZT wallet balance of a.
func (c *client) balance(a account) (int64, error) {
	st, raw, err := c.call("GET", "/api/fiat/wallets", a.token, nil, nil, nil)
	if err != nil || st != 200 {
		return 0, fmt.Errorf("list wallets: %d %s %v", st, raw, err)
	}
	var list []struct {
		ID      string `json:"id"`
		Balance int64  `json:"balance"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		var wrapped map[string]json.RawMessage
		if json.Unmarshal(raw, &wrapped) != nil {
			return 0, fmt.Errorf("list wallets: %s", raw)
		}
		for _, k := range []string{"items", "wallets", "data"} {
			if v, ok := wrapped[k]; ok && json.Unmarshal(v, &list) == nil {
				break
			}
		}
	}
	for _, w := range list {
		if w.ID == a.walletID {
			return w.Balance, nil
		}
	}
	return 0, fmt.Errorf("wallet %s not listed: %s", a.walletID, raw)
}

type results struct {
	latencies []time.Duration
	fees      int64
	ok        int64
	retries   int64
	byStatus  map[int]int64
	transport int64
	elapsed   time.Duration
}

func (r *results) throughput() float64 { return float64(r.ok) / r.elapsed.Seconds() }

// unexpected counts answers other than 200 and deliberate 503 retries.
func (r *results) unexpected() int64 {
	var n int64
	for st, c := range r.byStatus {
		if st != 200 {
			n += c
		}
	}
	return n + r.transport
}

// maxRetries bounds the 503 retries of one transfer; the same key is sent
// each time, so a transfer is never applied twice.
const maxRetries = 50

// load sends transfers from random wallets to random other users.
func (c *client) load(accounts []account, o options) *results {
	var (
		mu      sync.Mutex
		res     = &results{byStatus: map[int]int64{}}
		okCount atomic.Int64
		retries atomic.Int64
		wg      sync.WaitGroup
	)
	start := time.Now()
	end := start.Add(o.duration)
	stopProgress := progress(start, o.duration, &okCount, &retries)
	for w := 0; w < o.concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), uint64(start.UnixNano())))
			var lats []time.Duration
			var fees int64
			status := map[int]int64{}
			var transport int64
			for time.Now().Before(end) {
				from := accounts[rng.IntN(len(accounts))]
				to := accounts[rng.IntN(len(accounts))]
				if to.walletID == from.walletID {
					continue
				}
				body := map[string]any{"fromWalletId": from.walletID, "toEmail": to.email,
					"amountKzt": o.minAmount + rng.Int64N(o.maxAmount-o.minAmount+1), "memo": "bench"}
				key := map[string]string{"Idempotency-Key": ksuid.New().String()}
				t0 := time.Now()
				var st int
				var out struct {
					FeeKzt int64 `json:"feeKzt"`
				}
				var err error
				for attempt := 0; attempt <= maxRetries; attempt++ {
					st, _, err = c.call("POST", "/api/fiat/transfer", from.token, key, body, &out)
					if err != nil || st != http.StatusServiceUnavailable {
						break
					}
					retries.Add(1)
					time.Sleep(20 * time.Millisecond)
				}
				if err != nil {
					transport++
					continue
				}
				status[st]++
				if st == http.StatusOK {
					lats = append(lats, time.Since(t0))
					fees += out.FeeKzt
					okCount.Add(1)
				}
			}
			mu.Lock()
			res.latencies = append(res.latencies, lats...)
			res.fees += fees
			res.transport += transport
			for k, v := range status {
				res.byStatus[k] += v
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	stopProgress()
	res.ok = okCount.Load()
	res.retries = retries.Load()
	return res
}

func progress(start time.Time, total time.Duration, ok, retries *atomic.Int64) func() {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		var last int64
		for {
			select {
			case <-done:
				fmt.Fprintln(os.Stderr)
				return
			case <-tick.C:
				n := ok.Load()
				fmt.Fprintf(os.Stderr, "\r  %3.0fs/%.0fs  settled %8d  now %6d/s  503-retries %5d ",
					time.Since(start).Seconds(), total.Seconds(), n, n-last, retries.Load())
				last = n
			}
		}
	}()
	return func() { close(done); <-stopped }
}

func (r *results) print(o options) {
	sort.Slice(r.latencies, func(i, j int) bool { return r.latencies[i] < r.latencies[j] })
	pct := func(p float64) time.Duration {
		if len(r.latencies) == 0 {
			return 0
		}
		return r.latencies[min(len(r.latencies)-1, int(p*float64(len(r.latencies))))]
	}
	fmt.Printf("\ntransfers settled       %10d in %.1fs (%d clients)\n", r.ok, r.elapsed.Seconds(), o.concurrency)
	fmt.Printf("throughput              %10.1f transfers/s\n", r.throughput())
	fmt.Printf("latency p50/p95/p99     %8.1fms %6.1fms %6.1fms\n", ms(pct(0.50)), ms(pct(0.95)), ms(pct(0.99)))
	fmt.Printf("503 retries (same key)  %10d\n", r.retries)
	fmt.Printf("answers by status       %v, transport errors %d\n", r.byStatus, r.transport)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// conservation checks that the balances plus the fees paid equal what was
// deposited.
func (c *client) conservation(accounts []account, deposit, fees int64) (bool, error) {
	var sum int64
	for _, a := range accounts {
		b, err := c.balance(a)
		if err != nil {
			return false, err
		}
		if b < 0 {
			fmt.Printf("NEGATIVE balance %d in wallet %s\n", b, a.walletID)
			return false, nil
		}
		sum += b
	}
	want := deposit * int64(len(accounts))
	ok := sum+fees == want
	fmt.Printf("conservation            balances %d + fees %d = %d, deposited %d: %s\n",
		sum, fees, sum+fees, want, map[bool]string{true: "OK", false: "VIOLATED"}[ok])
	return ok, nil
}
