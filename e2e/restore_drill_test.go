package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// drillLoad sends keyed transfers between funded wallets and keeps which
// were acknowledged, by key; the key is also the transfer's memo, so the
// database says which of them it holds.
type drillLoad struct {
	p       *harness.Platform
	users   []harness.User
	wallets []string
	funded  int64
	client  *http.Client

	mu    sync.Mutex
	acked map[string]time.Time // key -> when its 200 arrived
}

func newDrillLoad(t *testing.T, p *harness.Platform, users int, each int64) *drillLoad {
	t.Helper()
	secret := fiatSecret(t, p)
	l := &drillLoad{p: p, client: &http.Client{Timeout: 20 * time.Second}, acked: map[string]time.Time{}}
	for i := 0; i < users; i++ {
		u := p.Register(t, fmt.Sprintf("drill%d", i))
		w := fiatCreateWallet(t, p, u, "KZT")
		fiatDeposit(t, p, secret, u, w, each)
		l.users, l.wallets, l.funded = append(l.users, u), append(l.wallets, w), l.funded+each
	}
	return l
}

// send sends n transfers named prefix-0.. from 4 workers, each retried with
// its key until answered 200.
func (l *drillLoad) send(t *testing.T, prefix string, n int) {
	t.Helper()
	onWorkers(n, 4, func(i int) {
		from, to := i%len(l.users), (i+1+i/len(l.users))%len(l.users)
		if to == from {
			to = (from + 1) % len(l.users)
		}
		key := fmt.Sprintf("%s-%d", prefix, i)
		body, _ := json.Marshal(map[string]any{"fromWalletId": l.wallets[from], "toEmail": l.users[to].Email,
			"amountKzt": 100 + i, "memo": key})
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			status, raw, err := postKeyed(l.client, l.p.BaseURL+"/api/fiat/transfer", l.users[from].Token, key, body)
			if err == nil && status == http.StatusOK {
				l.mu.Lock()
				l.acked[key] = time.Now()
				l.mu.Unlock()
				return
			}
			if (err == nil && status < 500) || time.Now().After(deadline) {
				t.Errorf("transfer %s: %d %s %v", key, status, raw, err)
				return
			}
		}
	})
}

// inDatabase returns how many transfer rows each memo has.
func inDatabase(t *testing.T, dbURL string) map[string]int {
	t.Helper()
	ctx := context.Background()
	db, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(ctx, `SELECT memo, count(*) FROM fiat_transactions WHERE kind = 'transfer' GROUP BY memo`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var memo string
		var n int
		if err := rows.Scan(&memo, &n); err != nil {
			t.Fatal(err)
		}
		out[memo] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// waitAllOnce waits until every acknowledged transfer is in the database
// exactly once and nothing else is, and fails naming what is not.
func (l *drillLoad) waitAllOnce(t *testing.T, within time.Duration) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(within); ; time.Sleep(200 * time.Millisecond) {
		have := inDatabase(t, l.p.DatabaseURL)
		last = ""
		for key := range l.acked {
			if have[key] != 1 {
				last = fmt.Sprintf("acknowledged transfer %s is in the database %d times", key, have[key])
				break
			}
		}
		for key, n := range have {
			if _, ok := l.acked[key]; !ok && last == "" {
				last = fmt.Sprintf("transfer %s (%d rows) was never acknowledged", key, n)
			}
		}
		if last == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", within, last)
		}
	}
}

// checkConserved: the users' balances and the fee wallet add up to what
// was deposited.
func (l *drillLoad) checkConserved(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	db, err := pgxpool.New(ctx, l.p.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var sum int64
	if err := db.QueryRow(ctx, `SELECT coalesce(sum(balance), 0) FROM fiat_wallets WHERE id = ANY($1) OR id = 'fee-KZT'`,
		l.wallets).Scan(&sum); err != nil {
		t.Fatal(err)
	}
	if sum != l.funded {
		t.Fatalf("balances and fees add up to %d, deposited %d", sum, l.funded)
	}
}

// verify runs `platform verify` on the platform's database and broker and
// fails unless every check passes.
func verifyDatabase(t *testing.T, p *harness.Platform) string {
	t.Helper()
	cmd := exec.Command(harness.Binary(t), "verify")
	cmd.Env = []string{"DATABASE_URL=" + p.DatabaseURL, "KAFKA_BROKERS=" + p.KafkaAddr,
		"PLATFORM_ENV=development", "DATA_DIR=" + p.DataDir, "PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "FAILED") || strings.Contains(string(out), "SKIPPED") {
		t.Fatalf("platform verify: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "hashes recomputed") || !strings.Contains(string(out), "positions within") {
		t.Fatalf("platform verify skipped a check:\n%s", out)
	}
	return string(out)
}

func dbSize(t *testing.T, dbURL string) int64 {
	t.Helper()
	ctx := context.Background()
	db, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var size int64
	if err := db.QueryRow(ctx, `SELECT sum(pg_database_size(datname))::bigint FROM pg_database`).Scan(&size); err != nil {
		t.Fatal(err)
	}
	return size
}

// TestRestoreDrill is the restore drill on a platform whose Postgres
// archives its WAL with pgBackRest (`make restore-drill` runs it with more
// rounds: RESTORE_DRILL_ROUNDS).
//
// Restore to a time: transfers, a full backup taken while more are sent,
// a time T once those are acknowledged, more transfers after T; the
// database is lost and restored to T into a fresh data directory; the
// platform starts on it against the same broker. Every transfer
// acknowledged before T is there once; those after T, which the restored
// database had not applied, are re-read from the command topic at the
// position the database stored and applied once; money is conserved and
// `platform verify` passes (chain, balances = transactions, reputation =
// events, positions within the topics). After T also go commands whose
// re-application in another order, or at another time, would decide
// otherwise: a ring of near-empty wallets, a trade ring, mask charges near
// the mask's limit (some declined), donations from near-empty wallets (one
// refused, one paid from a credit on another partition) and transfers at
// the pre-KYC monthly cap (FIAT_CAP_MONTHLY, one refused 1 tiyn over it);
// after the restore each is answered what it was, byte for byte, and its
// rows, amounts, ledger entries and its users' reputation are as before.
//
// Restore to the latest point, per round: more transfers, Postgres killed
// with SIGKILL right after the last acknowledgement and its data directory
// deleted, the latest point restored. What the archive had not received
// (RPO: at most archive_timeout of commits) is missing from the restored
// database, and is re-applied from the topics: nothing acknowledged is
// lost. Each round prints the database size, the RTO (restore and start)
// and the RPO measured.
func TestRestoreDrill(t *testing.T) {
	t.Parallel() // a long test: see "Parallel tests" in main_test.go
	rounds := 1
	if v, err := strconv.Atoi(os.Getenv("RESTORE_DRILL_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	pg := startArchivedPostgres(t)
	p := harness.Start(t, harness.Options{DatabaseURL: pg.newDatabase(t),
		Env: map[string]string{"FIAT_CAP_MONTHLY": strconv.Itoa(drillMonthlyCap)}})
	l := newDrillLoad(t, p, 8, 10_000_000)
	// A ring of near-empty wallets, sent around after T: re-applied after
	// the restore in another order, its hops must keep their answers.
	ring := l.newRing(t, 10, 5, 1_000)
	tring := newTradeRing(t, p, 6)
	// Mask charges near a mask's limit, donations from near-empty wallets,
	// transfers at the pre-KYC monthly cap: sent after T, re-applied after
	// the restore, each must keep its answer, rows and ledger entry.
	told := newToldLoad(t, l)

	l.send(t, "before-backup", 40)
	backupDone := make(chan string, 1)
	go func() { backupDone <- pg.backrest(t, "--type=full", "backup") }()
	l.send(t, "during-backup", 40)
	<-backupDone
	backupEnd := time.Now()
	l.send(t, "after-backup", 40)
	if t.Failed() {
		return
	}
	l.waitAllOnce(t, 30*time.Second)
	// pgBackRest records a backup's stop time in whole seconds, so a target
	// within the second the backup ended may precede it ("unable to find
	// backup set with stop time less than"): T is at least the second after.
	if wait := time.Until(backupEnd.Truncate(time.Second).Add(2 * time.Second)); wait > 0 {
		time.Sleep(wait)
	}
	// T: after every acknowledgement so far, before any later one.
	time.Sleep(50 * time.Millisecond)
	target := time.Now().UTC()
	time.Sleep(50 * time.Millisecond)
	beforeT := len(l.acked)
	l.send(t, "after-t", 60)
	ring.send(t, "ring-after-t", 5)
	tring.send(t, "trade-ring-after-t", 3)
	told.sendAfterT(t, "told-after-t")
	if t.Failed() {
		return
	}
	l.waitAllOnce(t, 30*time.Second)
	waitQuiet(t, p, mustPool(t, p.DatabaseURL), topics.GroupFiat, topics.GroupMask, topics.GroupLedger, topics.GroupReputation)
	told.snapshot(t, ring)
	pg.archiveNow(t, p.DatabaseURL)

	p.Kill()
	pg.kill9(t)
	pg.loseDataDir(t)
	_, rto := pg.restore(t, "--type=time", "--target="+target.Format("2006-01-02 15:04:05.000000+00"), "--target-action=promote")
	restored := inDatabase(t, p.DatabaseURL)
	var afterTRestored int
	for key, at := range l.acked {
		if at.Before(target) && restored[key] != 1 {
			t.Fatalf("transfer %s acknowledged before T is in the restored database %d times", key, restored[key])
		}
		if at.After(target) && restored[key] > 0 {
			afterTRestored++
		}
	}
	if afterTRestored != 0 {
		t.Fatalf("%d transfers acknowledged after T are in the database restored to T", afterTRestored)
	}
	size := dbSize(t, p.DatabaseURL)
	t.Logf("restore to T: %d transfers before T restored, %d after T missing; database %.1f MB restored and started in %s",
		beforeT, len(l.acked)-beforeT, float64(size)/(1<<20), rto.Round(time.Millisecond))
	p.Restart()
	reapplyStart := time.Now()
	l.waitAllOnce(t, 60*time.Second)
	t.Logf("restore to T: the %d transfers after T re-applied from the topics in %s", len(l.acked)-beforeT,
		time.Since(reapplyStart).Round(time.Millisecond))
	waitQuiet(t, p, mustPool(t, p.DatabaseURL), topics.GroupFiat, topics.GroupMask, topics.GroupLedger, topics.GroupReputation)
	t.Logf("restore to T: %s", told.checkTold(t, ring))
	l.checkConserved(t)
	ring.checkTold(t)
	tring.checkTold(t)
	t.Logf("platform verify after the restore to T:\n%s", verifyDatabase(t, p))
	waitQuiet(t, p, mustPool(t, p.DatabaseURL), topics.GroupFiat, topics.GroupLedger, topics.GroupReputation)
	t.Logf("restore to T: %s", l.checkLedger(t))

	for round := 1; round <= rounds; round++ {
		l.send(t, fmt.Sprintf("round%d", round), 60*round)
		if t.Failed() {
			return
		}
		// The kill comes right after the last acknowledgement: the commits
		// of up to archive_timeout are not archived yet.
		archived, lastAck := lastArchived(t, p.DatabaseURL), latest(l.acked)
		p.Kill()
		pg.kill9(t)
		killedAt := time.Now()
		pg.loseDataDir(t)
		copied, rto := pg.restore(t)
		have := inDatabase(t, p.DatabaseURL)
		lost := 0
		for key := range l.acked {
			if have[key] != 1 {
				lost++
			}
		}
		size := dbSize(t, p.DatabaseURL)
		p.Restart()
		l.waitAllOnce(t, 60*time.Second)
		l.checkConserved(t)
		verifyDatabase(t, p)
		waitQuiet(t, p, mustPool(t, p.DatabaseURL), topics.GroupFiat, topics.GroupLedger)
		ledgerState := l.checkLedger(t)
		t.Logf("drill round %d: database %.1f MB; RTO %s (files copied in %s: %.0f s/GB at that rate; the rest is the start and the WAL replay); "+
			"RPO: %d of %d acknowledged transfers missing from the restored database (last archived %s before the kill, last acknowledgement %s before it), "+
			"all %d re-applied from the topics; %s",
			round, float64(size)/(1<<20), rto.Round(time.Millisecond), copied.Round(time.Millisecond), copied.Seconds()/(float64(size)/(1<<30)),
			lost, len(l.acked), killedAt.Sub(archived).Round(time.Millisecond), killedAt.Sub(lastAck).Round(time.Millisecond), lost,
			ledgerState)
		if err := p.Get(t, "/api/platform/version", "").Status; err != http.StatusOK {
			t.Fatalf("platform after the restore answers %d", err)
		}
	}
}

func lastArchived(t *testing.T, dbURL string) time.Time {
	t.Helper()
	ctx := context.Background()
	db, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var at time.Time
	if err := db.QueryRow(ctx, `SELECT coalesce(last_archived_time, 'epoch') FROM pg_stat_archiver`).Scan(&at); err != nil {
		t.Fatal(err)
	}
	return at
}

func latest(m map[string]time.Time) time.Time {
	var last time.Time
	for _, at := range m {
		if at.After(last) {
			last = at
		}
	}
	return last
}

// checkLedger fails unless every transfer ledger entry names a
// transaction the database holds and every acknowledged transfer has
// exactly one entry: a transfer applied before a restore and again after it
// mints the same transaction id, so the entry appended from the first
// application's ledger.append record is the entry of the second, and the
// second's record is deduped by its source. It says what it counted.
func (l *drillLoad) checkLedger(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	db, err := pgxpool.New(ctx, l.p.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var orphans, entries int
	if err := db.QueryRow(ctx, `SELECT count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM fiat_transactions x WHERE x.id = e.source_id)), count(*)
		FROM ledger_entries e WHERE kind = $1`, schemas.LedgerKindTransfer).Scan(&orphans, &entries); err != nil {
		t.Fatal(err)
	}
	if orphans != 0 {
		t.Errorf("%d of %d transfer ledger entries name no transaction", orphans, entries)
	}
	if entries != len(l.acked) {
		t.Errorf("%d transfer ledger entries for %d acknowledged transfers", entries, len(l.acked))
	}
	rows, err := db.Query(ctx, `SELECT x.memo, count(e.id) FROM fiat_transactions x
		LEFT JOIN ledger_entries e ON e.kind = $1 AND e.source_id = x.id
		WHERE x.kind = 'transfer' GROUP BY x.memo`, schemas.LedgerKindTransfer)
	if err != nil {
		t.Fatal(err)
	}
	perMemo, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (struct {
		memo string
		n    int
	}, error) {
		var v struct {
			memo string
			n    int
		}
		return v, r.Scan(&v.memo, &v.n)
	})
	if err != nil {
		t.Fatal(err)
	}
	have := make(map[string]int, len(perMemo))
	for _, v := range perMemo {
		have[v.memo] = v.n
	}
	for key := range l.acked {
		if have[key] != 1 {
			t.Errorf("acknowledged transfer %s has %d ledger entries, want 1", key, have[key])
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return fmt.Sprintf("%d transfer ledger entries, none naming no transaction, one per each of the %d acknowledged transfers",
		entries, len(l.acked))
}

func mustPool(t *testing.T, dbURL string) *pgxpool.Pool {
	t.Helper()
	db, err := pgxpool.New(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}
