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

	fiatstore "github.com/fintech/platform/storage/fiat"
	ledgerstore "github.com/fintech/platform/storage/ledger"
	pipelinestore "github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
	reputationstore "github.com/fintech/platform/storage/reputation"
	"github.com/fintech/platform/topics"
)

// runVerify is `platform verify`: it checks a database against itself
// after a restore or any incident, one line per check, and exits 1 when a
// check fails. It needs DATABASE_URL only: with LEDGER_SALT (or, in
// development, the generated one under DATA_DIR) it recomputes the ledger
// hashes, else it checks the links; with a reachable broker (KAFKA_BROKERS,
// else the embedded one on KAFKA_EMBEDDED_PORT) it checks the stored
// consumer positions against the topic ends, else it says so.
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
	failed := false
	report := func(name string, ok bool, detail string) {
		status := "ok"
		if !ok {
			status, failed = "FAIL", true
		}
		fmt.Fprintf(out, "%-20s %-4s %s\n", name+":", status, detail)
	}
	checks := []func() (string, bool, string){
		func() (string, bool, string) { return verifyChain(ctx, pool, ledgerSalt(getenv)) },
		func() (string, bool, string) { return verifyBalances(ctx, pool) },
		func() (string, bool, string) { return verifyScores(ctx, pool) },
		func() (string, bool, string) { return verifyPositions(ctx, pool, verifyBrokers(getenv)) },
	}
	for _, c := range checks {
		report(c())
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

func verifyChain(ctx context.Context, pool *pgxpool.Pool, salt string) (string, bool, string) {
	const name = "ledger chain"
	if salt == "" {
		n, broken, reason, err := ledgerstore.VerifyLinks(ctx, pool)
		if err != nil {
			return name, false, oneLine(err)
		}
		if broken != nil {
			return name, false, fmt.Sprintf("%s at height %d of %d entries", reason, *broken, n)
		}
		return name, true, fmt.Sprintf("%d entries linked (LEDGER_SALT not set: links checked, hashes not recomputed)", n)
	}
	res, err := ledgerstore.Verify(ctx, pool, salt, 0, time.Now)
	if err != nil {
		return name, false, oneLine(err)
	}
	if !res.Valid {
		at := int64(0)
		if res.BrokenAt != nil {
			at = *res.BrokenAt
		}
		return name, false, fmt.Sprintf("%s at height %d of %d entries", res.Reason, at, res.Height)
	}
	return name, true, fmt.Sprintf("%d entries, hashes recomputed, head %s", res.Height, short(res.HeadHash))
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func verifyBalances(ctx context.Context, pool *pgxpool.Pool) (string, bool, string) {
	const name = "wallet balances"
	n, bad, badCount, err := fiatstore.VerifyBalances(ctx, pool)
	if err != nil {
		return name, false, oneLine(err)
	}
	if len(bad) > 0 {
		b := bad[0]
		return name, false, fmt.Sprintf("%d of %d wallets differ from the sum of their transactions; first %q: balance %d, transactions %d",
			badCount, n, b.ID, b.Stored, b.Computed)
	}
	return name, true, fmt.Sprintf("%d wallets equal the sum of their transactions", n)
}

func verifyScores(ctx context.Context, pool *pgxpool.Pool) (string, bool, string) {
	const name = "reputation"
	n, bad, badCount, err := reputationstore.VerifyScores(ctx, pool)
	if err != nil {
		return name, false, oneLine(err)
	}
	if len(bad) > 0 {
		b := bad[0]
		return name, false, fmt.Sprintf("%d of %d users differ from the sum of their events; first %q: score %d, events sum %d (count %d, counted %d)",
			badCount, n, b.UserID, b.Score, b.EventSum, b.EventCount, b.EventsCounted)
	}
	return name, true, fmt.Sprintf("%d scores equal the sum of their events", n)
}

func verifyPositions(ctx context.Context, pool *pgxpool.Pool, brokers []string) (string, bool, string) {
	const name = "consumer positions"
	stored, err := pipelinestore.AllPositions(ctx, pool)
	if err != nil {
		return name, false, oneLine(err)
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
		return name, true, "none stored"
	}
	cl, err := topics.NewClient(brokers)
	if err != nil {
		return name, true, fmt.Sprintf("%d stored, not checked: %v", count, err)
	}
	defer cl.Close()
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(lctx, names...)
	if err != nil {
		return name, true, fmt.Sprintf("%d stored, not checked: no broker reachable at %s (%v)", count, strings.Join(brokers, ","), err)
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
		return name, false, fmt.Sprintf("%d of %d positions past their topic's end: %s", len(over), count, strings.Join(over, "; "))
	}
	return name, true, fmt.Sprintf("%d positions within their topics' ends at %s", count, strings.Join(brokers, ","))
}
