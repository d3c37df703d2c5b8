package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kadm"

	cledger "github.com/fintech/platform/consumers/ledger"
	"github.com/fintech/platform/consumers/relay"
	"github.com/fintech/platform/storage/audit"
	fiatstore "github.com/fintech/platform/storage/fiat"
	ledgerstore "github.com/fintech/platform/storage/ledger"
	pipelinestore "github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
	reputationstore "github.com/fintech/platform/storage/reputation"
	"github.com/fintech/platform/topics"
)

// runVerify is `platform verify`: it checks a database against itself and
// the modules against each other after a restore or any incident, one line
// per check — ok, FAILED (with counts and a few ids) or SKIPPED (with why:
// never ok for what it could not check) — and exits 1 when a check failed.
// It reads its settings like every command (the environment, then the env
// file; --env-file works) and needs DATABASE_URL only: with LEDGER_SALT (or,
// in development, the generated one under DATA_DIR) it recomputes the ledger
// hashes, else it checks the links and says the hashes were skipped; with a
// reachable broker (KAFKA_BROKERS, else the embedded one on
// KAFKA_EMBEDDED_PORT) it checks the stored consumer positions, the
// event-log rows the relay passed and the appends in flight, else it says
// SKIPPED for what needed it.
func runVerify(args []string, getenv func(string) string, out io.Writer) int {
	if _, err := parseFlags("verify", args, nil); err != nil {
		fmt.Fprintln(os.Stderr, "platform: "+err.Error())
		return 2
	}
	dsn := getenv("DATABASE_URL")
	if dsn == "" {
		fmt.Fprintln(os.Stderr, "platform: configuration: DATABASE_URL: required: the database to verify")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	pool, err := postgres.Connect(ctx, dsn, 4)
	if err != nil {
		fmt.Fprintln(os.Stderr, "platform: DATABASE_URL: "+oneLine(err))
		return 1
	}
	defer pool.Close()
	brokers := verifyBrokers(getenv)
	unreachable := pingBrokers(ctx, brokers)
	var appends cledger.AppendLog
	if unreachable == "" {
		if ops, err := topics.NewOps(brokers); err == nil {
			defer ops.Close()
			appends = ops
		}
	}
	// needsBroker runs check, or says it was skipped without a broker.
	needsBroker := func(name string, check func() audit.Result) func() []audit.Result {
		return func() []audit.Result {
			if unreachable != "" {
				return []audit.Result{audit.Skippedf(name, "not checked: %s", unreachable)}
			}
			return []audit.Result{check()}
		}
	}
	checks := []func() []audit.Result{
		func() []audit.Result { return []audit.Result{verifyChain(ctx, pool, ledgerSalt(getenv))} },
		func() []audit.Result { return []audit.Result{verifyBalances(ctx, pool)} },
		func() []audit.Result { return []audit.Result{verifyScores(ctx, pool)} },
		needsBroker("consumer positions", func() audit.Result { return verifyPositions(ctx, pool, brokers) }),
		func() []audit.Result {
			// Without a broker, a record without an entry whose append is
			// not above the relay's cursor cannot be told from one in
			// flight on ledger.append: the line says SKIPPED.
			return cledger.NewCrossCheck(ledgerSources(), appends, 0).Run(ctx, pool)
		},
		needsBroker(relay.CheckPublished, func() audit.Result { return relay.VerifyPublished(ctx, pool, brokers, time.Now()) }),
	}
	failed := false
	for _, c := range checks {
		for _, r := range c() {
			failed = failed || r.Status == audit.Failed
			fmt.Fprintf(out, "%-25s %-7s %s\n", r.Check+":", r.Status, r.Detail)
		}
	}
	if failed {
		return 1
	}
	return 0
}

// ledgerSalt is LEDGER_SALT, or in development the one generated under
// DATA_DIR (never created here).
func ledgerSalt(getenv func(string) string) string {
	if s := getenv("LEDGER_SALT"); s != "" {
		return s
	}
	if getenv("PLATFORM_ENV") != envDevelopment {
		return ""
	}
	dir := getenv("DATA_DIR")
	if dir == "" {
		dir = "./.data"
	}
	b, err := os.ReadFile(filepath.Join(dir, "secrets", "ledger_salt"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// pingBrokers says why brokers cannot be reached, or "" when they can.
func pingBrokers(ctx context.Context, brokers []string) string {
	cl, err := topics.NewClient(brokers)
	if err != nil {
		return err.Error()
	}
	defer cl.Close()
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := cl.Ping(pctx); err != nil {
		return fmt.Sprintf("no broker reachable at %s (%v)", strings.Join(brokers, ","), err)
	}
	return ""
}

func verifyBrokers(getenv func(string) string) []string {
	if b := topics.ParseBrokers(getenv("KAFKA_BROKERS")); len(b) > 0 {
		return b
	}
	port := getenv("KAFKA_EMBEDDED_PORT")
	if port == "" {
		port = strconv.Itoa(defaultKafkaPort)
	}
	return []string{"127.0.0.1:" + port}
}

func verifyChain(ctx context.Context, pool *pgxpool.Pool, salt string) audit.Result {
	const name = "ledger chain"
	if salt == "" {
		n, broken, reason, err := ledgerstore.VerifyLinks(ctx, pool)
		if err != nil {
			return audit.Failedf(name, "%s", oneLine(err))
		}
		if broken != nil {
			return audit.Failedf(name, "%s at height %d of %d entries", reason, *broken, n)
		}
		return audit.Skippedf(name, "hashes not recomputed: LEDGER_SALT is not set (set it, or pass --env-file); the links of %d entries hold", n)
	}
	res, err := ledgerstore.Verify(ctx, pool, salt, 0, time.Now)
	if err != nil {
		return audit.Failedf(name, "%s", oneLine(err))
	}
	if !res.Valid {
		at := int64(0)
		if res.BrokenAt != nil {
			at = *res.BrokenAt
		}
		return audit.Failedf(name, "%s at height %d of %d entries", res.Reason, at, res.Height)
	}
	return audit.Okf(name, "%d entries, hashes recomputed, head %s", res.Height, short(res.HeadHash))
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func verifyBalances(ctx context.Context, pool *pgxpool.Pool) audit.Result {
	const name = "wallet balances"
	n, bad, badCount, err := fiatstore.VerifyBalances(ctx, pool)
	if err != nil {
		return audit.Failedf(name, "%s", oneLine(err))
	}
	if len(bad) > 0 {
		b := bad[0]
		return audit.Failedf(name, "%d of %d wallets differ from the sum of their transactions; first %q: balance %d, transactions %d",
			badCount, n, b.ID, b.Stored, b.Computed)
	}
	return audit.Okf(name, "%d wallets equal the sum of their transactions", n)
}

func verifyScores(ctx context.Context, pool *pgxpool.Pool) audit.Result {
	const name = "reputation"
	n, bad, badCount, err := reputationstore.VerifyScores(ctx, pool)
	if err != nil {
		return audit.Failedf(name, "%s", oneLine(err))
	}
	if len(bad) > 0 {
		b := bad[0]
		return audit.Failedf(name, "%d of %d users differ from the sum of their events; first %q: score %d, events sum %d (count %d, counted %d)",
			badCount, n, b.UserID, b.Score, b.EventSum, b.EventCount, b.EventsCounted)
	}
	return audit.Okf(name, "%d scores equal the sum of their events", n)
}

func verifyPositions(ctx context.Context, pool *pgxpool.Pool, brokers []string) audit.Result {
	const name = "consumer positions"
	stored, err := pipelinestore.AllPositions(ctx, pool)
	if err != nil {
		return audit.Failedf(name, "%s", oneLine(err))
	}
	var names []string
	count := 0
	for _, ps := range stored {
		for _, p := range ps {
			names = append(names, p.Topic)
			count++
		}
	}
	if count == 0 {
		return audit.Okf(name, "none stored")
	}
	cl, err := topics.NewClient(brokers)
	if err != nil {
		return audit.Skippedf(name, "%d stored, not checked: %v", count, err)
	}
	defer cl.Close()
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(lctx, names...)
	if err != nil {
		return audit.Skippedf(name, "%d stored, not checked: no broker reachable at %s (%v)", count, strings.Join(brokers, ","), err)
	}
	var over []string
	for _, g := range sortedKeys(stored) {
		for _, p := range stored[g] {
			end, ok := ends.Lookup(p.Topic, p.Partition)
			if !ok || end.Err != nil {
				over = append(over, fmt.Sprintf("%s %s/%d: no such partition on the broker", g, p.Topic, p.Partition))
				continue
			}
			if p.Next > end.Offset {
				over = append(over, fmt.Sprintf("%s %s/%d at %d past the topic end %d", g, p.Topic, p.Partition, p.Next, end.Offset))
			}
		}
	}
	if len(over) > 0 {
		return audit.Failedf(name, "%d of %d positions past their topic's end: %s", len(over), count, strings.Join(over, "; "))
	}
	return audit.Okf(name, "%d positions within their topics' ends at %s", count, strings.Join(brokers, ","))
}
