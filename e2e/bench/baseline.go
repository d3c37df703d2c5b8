package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/storage/postgres/pgtest"
)

// baselineScript is the platform's transfer as one plain SQL transaction:
// lock both wallets in id order, check the balance, debit amount + fee,
// credit the amount, insert the transaction row. pgbench runs it with
// prepared statements, one transaction per transfer.
const baselineScript = `\set a random(1, :n)
\set b random(1, :n - 1)
\set b case when :b >= :a then :b + 1 else :b end
\set amount random(:minamount, :maxamount)
\set fee (:amount + 999) / 1000
\set total :amount + :fee
BEGIN;
SELECT sum(CASE WHEN id = :a THEN balance END) AS bal FROM (SELECT id, balance FROM bench_wallets WHERE id IN (:a, :b) ORDER BY id FOR UPDATE) w \gset
\if :bal >= :total
UPDATE bench_wallets SET balance = balance - :total WHERE id = :a;
UPDATE bench_wallets SET balance = balance + :amount WHERE id = :b;
INSERT INTO bench_transactions (from_id, to_id, amount, fee) VALUES (:a, :b, :amount, :fee);
\endif
COMMIT;
`

const baselineSchema = `
CREATE TABLE bench_wallets (id bigint PRIMARY KEY, balance bigint NOT NULL);
CREATE TABLE bench_transactions (id bigserial PRIMARY KEY, from_id bigint NOT NULL, to_id bigint NOT NULL,
    amount bigint NOT NULL, fee bigint NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
`

var tpsLine = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// baseline runs pgbench on a fresh database of the same Postgres server and
// returns its transfers per second.
func baseline(ptb *harness.ProcessTB, o options) (float64, error) {
	pgbench, err := exec.LookPath("pgbench")
	if err != nil {
		return 0, fmt.Errorf("pgbench not found (Debian's postgresql package ships it): %w", err)
	}
	ctx := context.Background()
	pool, url := pgtest.NewDB(ptb)
	if _, err := pool.Exec(ctx, baselineSchema); err != nil {
		return 0, fmt.Errorf("baseline schema: %w", err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO bench_wallets SELECT g, $1 FROM generate_series(1, $2) g`, o.deposit, o.users); err != nil {
		return 0, fmt.Errorf("baseline wallets: %w", err)
	}
	dir := ptb.TempDir()
	script := filepath.Join(dir, "transfer.sql")
	if err := os.WriteFile(script, []byte(baselineScript), 0o644); err != nil {
		return 0, err
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(pgbench, "-n", "-M", "prepared",
		"-c", strconv.Itoa(o.concurrency), "-j", "2", "-T", strconv.Itoa(int(o.baselineDuration.Seconds())),
		"-D", "n="+strconv.Itoa(o.users),
		"-D", "minamount="+strconv.FormatInt(o.minAmount, 10), "-D", "maxamount="+strconv.FormatInt(o.maxAmount, 10),
		"-P", "5", "-f", script,
		"-h", cfg.Host, "-p", strconv.Itoa(int(cfg.Port)), "-U", cfg.User, cfg.Database)
	cmd.Stderr = os.Stderr // pgbench's -P progress lines
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("pgbench: %w\n%s", err, out)
	}
	m := tpsLine.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("pgbench printed no tps line:\n%s", out)
	}
	tps, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		return 0, err
	}
	var sum, fees int64
	if err := pool.QueryRow(ctx, `SELECT (SELECT sum(balance) FROM bench_wallets), (SELECT coalesce(sum(fee),0) FROM bench_transactions)`).Scan(&sum, &fees); err != nil {
		return 0, err
	}
	if sum+fees != o.deposit*int64(o.users) {
		return 0, fmt.Errorf("baseline broke conservation: %d + %d != %d", sum, fees, o.deposit*int64(o.users))
	}
	return tps, nil
}
