// Command bench measures the money path: it starts a fresh platform on the
// local stack, registers users, funds their wallets through the real signed
// deposit webhook, then sends transfers over HTTP at a fixed concurrency for
// a fixed duration (retrying 503s with the same Idempotency-Key). It prints
// throughput, latency percentiles and errors, checks conservation, and runs a
// pgbench baseline of the same transfer as one plain SQL transaction per
// transfer against the same Postgres, printing the ratio of the two.
//
//	go run ./e2e/bench -users 100 -concurrency 32 -duration 30s
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

type options struct {
	users            int
	concurrency      int
	duration         time.Duration
	baselineDuration time.Duration
	deposit          int64
	minAmount        int64
	maxAmount        int64
	skipBaseline     bool
	url              string
	secret           string
}

func main() {
	var o options
	flag.IntVar(&o.users, "users", 100, "users (and KZT wallets) to create")
	flag.IntVar(&o.concurrency, "concurrency", 32, "concurrent HTTP clients, and pgbench clients")
	flag.DurationVar(&o.duration, "duration", 30*time.Second, "how long to send transfers")
	flag.DurationVar(&o.baselineDuration, "baseline-duration", 30*time.Second, "how long pgbench runs")
	flag.Int64Var(&o.deposit, "deposit", 10_000_000, "minor units deposited into each wallet")
	flag.Int64Var(&o.minAmount, "min-amount", 100, "smallest transfer, minor units")
	flag.Int64Var(&o.maxAmount, "max-amount", 10_000, "largest transfer, minor units")
	flag.BoolVar(&o.skipBaseline, "skip-baseline", false, "do not run the pgbench baseline")
	flag.StringVar(&o.url, "url", "", "use this running platform instead of starting one (needs -processor-secret)")
	flag.StringVar(&o.secret, "processor-secret", "", "PROCESSOR_WEBHOOK_SECRET of the platform given by -url")
	flag.Parse()
	if o.users < 2 || o.concurrency < 1 || o.duration <= 0 || o.minAmount < 1 || o.maxAmount < o.minAmount {
		fmt.Fprintln(os.Stderr, "bench: need -users >= 2, -concurrency >= 1, -duration > 0, 1 <= -min-amount <= -max-amount")
		os.Exit(2)
	}
	os.Exit(run(o))
}

func run(o options) int {
	ptb := harness.NewProcessTB()
	defer ptb.Close()

	base, secret := o.url, o.secret
	var dbURL string
	if base == "" {
		secret = "whsec_bench_" + fmt.Sprint(time.Now().UnixNano())
		step("starting a fresh platform on the local stack")
		p := harness.Start(ptb, harness.Options{Env: map[string]string{
			"PROCESSOR_WEBHOOK_SECRET": secret,
			"FIAT_CAP_PER_TRANSFER":    "1000000000000000",
			"FIAT_CAP_DAILY_DEPOSIT":   "1000000000000000",
			"FIAT_CAP_MONTHLY":         "1000000000000000",
		}})
		base, dbURL = p.BaseURL, p.DatabaseURL
		defer p.Stop()
	}

	c := newClient(base, o.concurrency)
	step(fmt.Sprintf("registering %d users and funding their KZT wallets through the signed deposit webhook", o.users))
	accounts, err := c.setup(o.users, o.deposit, secret)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: setup:", err)
		return 1
	}

	step(fmt.Sprintf("sending transfers: %d clients for %s", o.concurrency, o.duration))
	res := c.load(accounts, o)
	res.print(o)

	step("checking conservation")
	ok, err := c.conservation(accounts, o.deposit, res.fees)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: conservation:", err)
		return 1
	}

	exit := 0
	if !ok || res.unexpected() > 0 {
		exit = 1
	}
	if o.skipBaseline || dbURL == "" {
		return exit
	}
	step(fmt.Sprintf("baseline: pgbench, one SQL transaction per transfer, %d clients for %s", o.concurrency, o.baselineDuration))
	tps, err := baseline(ptb, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: baseline:", err)
		return 1
	}
	fmt.Printf("\nbaseline (pgbench)      %10.1f transfers/s\n", tps)
	fmt.Printf("platform (REST→Kafka→PG) %9.1f transfers/s\n", res.throughput())
	fmt.Printf("ratio platform/baseline %10.2f\n", res.throughput()/tps)
	return exit
}

func step(s string) { fmt.Fprintf(os.Stderr, "==> %s\n", s) }
