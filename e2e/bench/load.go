package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/ksuid"
	"github.com/stripe/stripe-go/v82/webhook"
	"github.com/valyala/fasthttp"
)

// client talks to the platform: net/http for the few setup calls, and a
// fasthttp HostClient with pre-built requests for the load itself, so that
// the generator spends little of the CPU it measures.
type client struct {
	base string
	http *http.Client
	fast *fasthttp.HostClient
}

func newClient(base string, concurrency int) (*client, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64, IdleConnTimeout: time.Minute}
	return &client{base: base, http: &http.Client{Transport: tr, Timeout: 30 * time.Second},
		fast: &fasthttp.HostClient{Addr: u.Host, MaxConns: concurrency + 8, ReadTimeout: 30 * time.Second,
			WriteTimeout: 30 * time.Second, MaxIdleConnDuration: time.Minute,
			NoDefaultUserAgentHeader: true, DisableHeaderNamesNormalizing: true}}, nil
}

// call sends a JSON request and decodes a JSON answer into out (when not nil).
func (c *client) call(method, path, token string, body any, out any) (int, []byte, error) {
	return c.callKey(method, path, token, "", body, out)
}

// callKey is call with an Idempotency-Key (when not empty).
func (c *client) callKey(method, path, token, key string, body any, out any) (int, []byte, error) {
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
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
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
// deposit through POST /deposit and the processor's signed webhook, then
// waits until every deposit is credited.
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
	st, raw, err := c.register(email, &reg)
	if err != nil || st != 201 {
		return account{}, fmt.Errorf("register: %d %s %v", st, raw, err)
	}
	var w struct {
		ID string `json:"id"`
	}
	st, raw, err = c.call("POST", "/api/fiat/wallets", reg.Token, map[string]string{"currency": "KZT"}, &w)
	if err != nil || st != 201 {
		return account{}, fmt.Errorf("create wallet: %d %s %v", st, raw, err)
	}
	var d struct {
		DepositID string `json:"depositId"`
	}
	st, raw, err = c.call("POST", "/api/fiat/deposit", reg.Token, map[string]any{"walletId": w.ID, "amount": deposit}, &d)
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
	st, raw, err := c.call("GET", "/api/fiat/wallets", a.token, nil, nil)
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

// results of one timed run, of the platform or of a baseline.
type results struct {
	latencies []time.Duration
	// hops are the latency budget's samples (hops.go); hopSkipped the
	// answers without usable times.
	hops       []hopSample
	hopSkipped int
	fees       int64
	ok         int64 // settled (200) or committed
	attempted  int64 // transfers started
	retries    int64
	byStatus   map[int]int64
	byCode     map[string]int64 // answers other than 200 by "status code"
	transport  int64            // transfers given up after transport errors
	// transportRetries counts resends after a transport error (same key).
	transportRetries int64
	start            time.Time     // first request
	loadTime         time.Duration // sending
	drainTime        time.Duration // after the last answer until lag 0 (platform)
	elapsed          time.Duration // loadTime + drainTime: the clock the throughput uses
	conserved        bool
	perMinute        []int64
	conns            int           // Postgres connections (baselines)
	genCPU           time.Duration // CPU the load generator (this process) used
	sutCPU           time.Duration // CPU the platform process used, load and drain
	used             cost          // records, fsyncs, round trips, Postgres CPU (platform runs)
	peakRSS          int64         // the platform process's peak resident set, bytes
	startRSS         int64         // its peak when the load began (start-up, the broker's replay, setup)
	pg               pgDelta       // commits of the run's database, the cluster's WAL (platform runs)
	top              string        // the CPU profile's top 15 by cum (-pprof), "" without one
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

func (r *results) settledShare() float64 {
	if r.attempted == 0 {
		return 0
	}
	return float64(r.ok) / float64(r.attempted)
}

func (r *results) p(q float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	if !sort.SliceIsSorted(r.latencies, func(i, j int) bool { return r.latencies[i] < r.latencies[j] }) {
		sort.Slice(r.latencies, func(i, j int) bool { return r.latencies[i] < r.latencies[j] })
	}
	return r.latencies[min(len(r.latencies)-1, int(q*float64(len(r.latencies))))]
}

// maxRetries bounds the 503 retries of one transfer; the same key is sent
// each time, so a transfer is never applied twice.
const maxRetries = 50

// prebuilt is one ready transfer request: the Authorization header and the
// JSON body, built before the clock starts.
type prebuilt struct {
	auth []byte
	body []byte
}

// prebuild makes n random transfers between distinct accounts.
func prebuild(accounts []account, n int, o options, rng *rand.Rand) []prebuilt {
	out := make([]prebuilt, n)
	auths := make([][]byte, len(accounts))
	for i, a := range accounts {
		auths[i] = []byte("Bearer " + a.token)
	}
	for i := range out {
		f := rng.IntN(len(accounts))
		t := rng.IntN(len(accounts) - 1)
		if t >= f {
			t++
		}
		amount := o.minAmount + rng.Int64N(o.maxAmount-o.minAmount+1)
		b := make([]byte, 0, 160)
		b = append(b, `{"fromWalletId":"`...)
		b = append(b, accounts[f].walletID...)
		b = append(b, `","toEmail":"`...)
		b = append(b, accounts[t].email...)
		b = append(b, `","amountKzt":`...)
		b = strconv.AppendInt(b, amount, 10)
		b = append(b, `,"memo":"bench"}`...)
		out[i] = prebuilt{auth: auths[f], body: b}
	}
	return out
}

var feeField = []byte(`"feeKzt":`)

var codeField = []byte(`"code":"`)

// errorCode reads the error code of an error answer ("" when it has none),
// so that a run says why an answer was not 200.
func errorCode(body []byte) string {
	i := bytes.Index(body, codeField)
	if i < 0 {
		return ""
	}
	rest := body[i+len(codeField):]
	if j := bytes.IndexByte(rest, '"'); j >= 0 {
		return string(rest[:j])
	}
	return ""
}

// feeFrom reads feeKzt from a transfer answer without decoding the whole
// document.
func feeFrom(body []byte) int64 {
	i := bytes.Index(body, feeField)
	if i < 0 {
		return 0
	}
	var v int64
	for _, c := range body[i+len(feeField):] {
		if c < '0' || c > '9' {
			break
		}
		v = v*10 + int64(c-'0')
	}
	return v
}

// load sends transfers at the given concurrency for o.duration.
func (c *client) load(accounts []account, clients int, o options, runID string) *results {
	var (
		mu               sync.Mutex
		res              = &results{byStatus: map[int]int64{}, byCode: map[string]int64{}}
		okCount          atomic.Int64
		retries          atomic.Int64
		attempted        atomic.Int64
		transportRetries atomic.Int64
		wg               sync.WaitGroup
	)
	// Connections kept from before a platform restart are dead.
	c.fast.CloseIdleConnections()
	uri := []byte(c.base + "/api/fiat/transfer")
	seed := uint64(time.Now().UnixNano())
	bodies := make([][]prebuilt, clients)
	for w := range bodies {
		bodies[w] = prebuild(accounts, 512, o, rand.New(rand.NewPCG(uint64(w)+1, seed)))
	}
	var perMinute []int64
	start := time.Now()
	end := start.Add(o.duration)
	stopProgress := progress(start, o.duration, &okCount, &retries, "503-retries", &perMinute)
	for w := 0; w < clients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := fasthttp.AcquireRequest()
			resp := fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			req.Header.SetMethod(fasthttp.MethodPost)
			req.SetRequestURIBytes(uri)
			req.Header.SetContentType("application/json")
			req.Header.Set("Platform-Hops", "1")
			keyPrefix := []byte("bench-" + runID + "-" + strconv.Itoa(w) + "-")
			key := make([]byte, 0, 64)
			lats := make([]time.Duration, 0, 1<<14)
			hops := make([]hopSample, 0, 1<<12)
			hopSkipped := 0
			var fees, transport int64
			status := map[int]int64{}
			codes := map[string]int64{}
			mine := bodies[w]
			for seq := 0; time.Now().Before(end); seq++ {
				pb := mine[seq%len(mine)]
				key = strconv.AppendInt(append(key[:0], keyPrefix...), int64(seq), 10)
				req.Header.SetBytesV("Authorization", pb.auth)
				req.Header.SetBytesV("Idempotency-Key", key)
				req.SetBodyRaw(pb.body)
				attempted.Add(1)
				t0 := time.Now()
				var st int
				var err error
				attempt := 0
				for ; attempt <= maxRetries; attempt++ {
					err = c.fast.Do(req, resp)
					if err != nil {
						// Safe to resend: the same key names the same command.
						transportRetries.Add(1)
						time.Sleep(20 * time.Millisecond)
						continue
					}
					st = resp.StatusCode()
					if st != http.StatusServiceUnavailable {
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
					t1 := time.Now()
					lats = append(lats, t1.Sub(t0))
					if attempt == 0 && len(hops) < maxHopSamples {
						if h, ok := parseHops(t0.UnixNano(), t1.UnixNano(), peekHops(resp)); ok {
							hops = append(hops, h)
						} else {
							hopSkipped++
						}
					}
					fees += feeFrom(resp.Body())
					okCount.Add(1)
				} else {
					codes[strconv.Itoa(st)+" "+errorCode(resp.Body())]++
				}
			}
			mu.Lock()
			res.latencies = append(res.latencies, lats...)
			res.hops = append(res.hops, hops...)
			res.hopSkipped += hopSkipped
			res.fees += fees
			res.transport += transport
			for k, v := range status {
				res.byStatus[k] += v
			}
			for k, v := range codes {
				res.byCode[k] += v
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.start = start
	res.loadTime = time.Since(start)
	stopProgress()
	res.ok = okCount.Load()
	res.retries = retries.Load()
	res.attempted = attempted.Load()
	res.transportRetries = transportRetries.Load()
	res.perMinute = perMinute
	return res
}

// progress prints a status line each second and, when perMinute is not nil,
// records the count settled in each whole minute.
func progress(start time.Time, total time.Duration, ok, other *atomic.Int64, otherName string, perMinute *[]int64) func() {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		var last, lastMinute int64
		nextMinute := start.Add(time.Minute)
		for {
			select {
			case <-done:
				fmt.Fprintln(os.Stderr)
				return
			case now := <-tick.C:
				n := ok.Load()
				fmt.Fprintf(os.Stderr, "\r  %3.0fs/%.0fs  done %8d  now %6d/s  %s %5d ",
					now.Sub(start).Seconds(), total.Seconds(), n, n-last, otherName, other.Load())
				last = n
				if perMinute != nil && !now.Before(nextMinute) {
					*perMinute = append(*perMinute, n-lastMinute)
					fmt.Fprintf(os.Stderr, "\n  minute %2d: %d transfers, %.1f/s\n", len(*perMinute), n-lastMinute, float64(n-lastMinute)/60)
					lastMinute = n
					nextMinute = nextMinute.Add(time.Minute)
				}
			}
		}
	}()
	return func() { close(done); <-stopped }
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// peekHops is the answer's Platform-Hops header. The client does not
// normalize header names, and HAProxy (the cluster's) passes them on in
// lower case, so both spellings are looked up.
func peekHops(resp *fasthttp.Response) []byte {
	if v := resp.Header.Peek("Platform-Hops"); v != nil {
		return v
	}
	return resp.Header.Peek("platform-hops")
}
