package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/segmentio/ksuid"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/storage/clickhouse"
	"github.com/fintech/platform/topics"
)

// analyticsPostgres is, per view query of the analytics guide, the same
// figures computed from Postgres, the state of record: same columns, same
// order (ids in byte order, like ClickHouse's).
var analyticsPostgres = map[string]string{
	"daily_volume": `
SELECT to_char((created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD'), currency, count(*), sum(amount)::bigint, sum(fee)::bigint
FROM fiat_transactions WHERE kind = 'transfer' AND status = 'completed'
GROUP BY 1, 2 ORDER BY 1, currency COLLATE "C"`,
	"leaderboard": `
SELECT s.user_id, coalesce(u.name, ''), s.score, s.rank, s.event_count
FROM reputation_scores s LEFT JOIN users u ON u.id = s.user_id
ORDER BY s.score DESC, s.user_id COLLATE "C" LIMIT 20`,
	"campaign_progress": `
SELECT c.id, c.title, c.status, coalesce(u.name, ''), c.goal_kzt, c.raised_kzt, c.raised_kzt * 100 / c.goal_kzt,
    count(d.id), count(DISTINCT d.donor_user_id)
FROM charity_campaigns c
LEFT JOIN charity_donations d ON d.campaign_id = c.id
LEFT JOIN users u ON u.id = c.proposer_user_id
GROUP BY c.id, u.name ORDER BY c.raised_kzt DESC, c.id COLLATE "C"`,
	"governance_participation": `
SELECT p.id, p.title, p.status, coalesce(u.name, ''), p.quorum, count(b.id),
    CASE WHEN p.status IN ('executed', 'rejected') THEN count(b.id) ELSE 0 END,
    CASE WHEN p.status IN ('executed', 'rejected') AND count(b.id) >= p.quorum THEN 1 ELSE 0 END
FROM gov_proposals p
LEFT JOIN gov_ballots b ON b.proposal_id = p.id
LEFT JOIN users u ON u.id = p.author_user_id
GROUP BY p.id, u.name ORDER BY count(b.id) DESC, p.id COLLATE "C"`,
	"webhook_delivery_health": `
SELECT subscription_id, count(*), count(*) FILTER (WHERE status = 'delivered'),
    count(*) FILTER (WHERE status = 'pending'), count(*) FILTER (WHERE status = 'failed'),
    count(*) FILTER (WHERE status = 'dead_letter'), sum(attempts)::bigint
FROM webhook_deliveries GROUP BY 1 ORDER BY subscription_id COLLATE "C"`,
}

// analyticsLive are the view queries over state that changes without a
// request: a webhook delivery is retried on its own schedule (and one
// claimed when the process was killed waits for its lease), so its twin may
// be read a change apart; they are compared again until equal, within 45 s.
var analyticsLive = map[string]bool{"webhook_delivery_health": true}

var guideQuery = regexp.MustCompile("(?s)<!-- query: ([a-z_]+) -->\\s*```sql\\n(.*?)```")

// analyticsGuideQueries reads the view queries of the analytics guide.
func analyticsGuideQueries(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile("../consumers/sink/README.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range guideQuery.FindAllStringSubmatch(string(raw), -1) {
		out[m[1]] = strings.TrimSuffix(strings.TrimSpace(m[2]), ";")
	}
	for name := range analyticsPostgres {
		if out[name] == "" {
			t.Fatalf("the analytics guide has no query %q", name)
		}
	}
	return out
}

// analyticsWorld is the test's view of one platform's two stores.
type analyticsWorld struct {
	p    *harness.Platform
	pg   *pgxpool.Pool
	ch   driver.Conn
	db   string
	sqls map[string]string
}

func newAnalyticsWorld(t *testing.T, p *harness.Platform) *analyticsWorld {
	t.Helper()
	ctx := context.Background()
	pg, err := pgxpool.New(ctx, p.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Close)
	addr := "127.0.0.1:19000"
	for _, kv := range p.Env {
		if v, ok := strings.CutPrefix(kv, "CLICKHOUSE_ADDR="); ok && v != "" {
			addr = v
		}
	}
	ch, err := clickhouse.Connect(ctx, addr, "default")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ch.Close() })
	cfg, err := pgx.ParseConfig(p.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	return &analyticsWorld{p: p, pg: pg, ch: ch, db: clickhouse.DatabaseName(cfg.Database),
		sqls: analyticsGuideQueries(t)}
}

// quiesce waits until everything written so far reached ClickHouse: the
// relay published the whole event log, and the appliers (whose commands
// write Postgres and emit more events) and the sink have no lag.
func (w *analyticsWorld) quiesce(t *testing.T) {
	t.Helper()
	waitQuiet(t, w.p, w.pg, topics.GroupFiat, topics.GroupLedger, topics.GroupReputation, topics.GroupSink, topics.GroupWebhooks)
}

// waitQuiet waits until the relay published the whole event log and the
// groups have no lag, twice in a row, so that a record applied between the
// two looks (and the events it emitted) is seen.
func waitQuiet(t *testing.T, p *harness.Platform, pg *pgxpool.Pool, groups ...string) {
	t.Helper()
	ctx := context.Background()
	cl, err := topics.NewClient([]string{p.KafkaAddr})
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	defer adm.Close()
	deadline := time.Now().Add(90 * time.Second)
	calm, last := 0, ""
	for calm < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("not caught up after 90 s: %s", last)
		}
		var cursor, head int64
		err := pg.QueryRow(ctx, `SELECT (SELECT seq FROM event_log_cursor), (SELECT coalesce(max(seq), 0) FROM event_log)`).Scan(&cursor, &head)
		lag := int64(-1)
		if err == nil {
			if lags, lerr := adm.Lag(ctx, groups...); lerr == nil {
				lag = 0
				for _, g := range groups {
					l, ok := lags[g]
					if !ok || l.Error() != nil {
						lag = -1
						break
					}
					lag += l.Lag.Total()
				}
			}
		}
		last = fmt.Sprintf("relay at %d of %d, lag %d (err %v)", cursor, head, lag, err)
		if err == nil && cursor >= head && lag == 0 {
			calm++
		} else {
			calm = 0
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// rowsOf renders every row as "a|b|c" (dates as YYYY-MM-DD).
func rowsOfCH(t *testing.T, conn driver.Conn, q string) []string {
	t.Helper()
	rows, err := conn.Query(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	cols := rows.ColumnTypes()
	for rows.Next() {
		vals := make([]any, len(cols))
		for i, c := range cols {
			vals[i] = reflect.New(c.ScanType()).Interface()
		}
		if err := rows.Scan(vals...); err != nil {
			t.Fatal(err)
		}
		out = append(out, joinRow(vals))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func rowsOfPG(t *testing.T, pg *pgxpool.Pool, q string) []string {
	t.Helper()
	rows, err := pg.Query(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		out = append(out, joinRow(ptrs))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func joinRow(ptrs []any) string {
	parts := make([]string, len(ptrs))
	for i, v := range ptrs {
		x := reflect.ValueOf(v).Elem().Interface()
		if tm, ok := x.(time.Time); ok {
			x = tm.UTC().Format("2006-01-02")
		}
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, "|")
}

// compare runs every view query of the guide and its Postgres twin.
func (w *analyticsWorld) compare(t *testing.T, when string) {
	t.Helper()
	for name, pq := range analyticsPostgres {
		q := strings.ReplaceAll(w.sqls[name], "platform.", w.db+".")
		start := time.Now()
		got := rowsOfCH(t, w.ch, q)
		took := time.Since(start)
		want := rowsOfPG(t, w.pg, pq)
		for until := time.Now().Add(45 * time.Second); analyticsLive[name] && time.Now().Before(until) &&
			strings.Join(got, "\n") != strings.Join(want, "\n"); {
			w.quiesce(t)
			got, want = rowsOfCH(t, w.ch, q), rowsOfPG(t, w.pg, pq)
		}
		if len(want) == 0 {
			t.Fatalf("%s: Postgres has no rows for %s: the test made nothing to compare", when, name)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: view query %s differs from Postgres\nClickHouse:\n%s\nPostgres:\n%s", when, name,
				strings.Join(got, "\n"), strings.Join(want, "\n"))
			continue
		}
		t.Logf("%s: %s equal to Postgres (%d rows, %s)", when, name, len(got), took.Round(time.Millisecond))
	}
}

// TestAnalyticsViewsEqualPostgres runs the analytics guide's view queries
// on ClickHouse and compares them with Postgres once the sink caught up:
// after a quiet load, after a SIGKILL of the platform (and its sink) while
// events are being sunk, and after every row on disk was inserted a second
// time (the redelivery a crash between insert and offset commit causes).
func TestAnalyticsViewsEqualPostgres(t *testing.T) {
	// Five quick attempts, so a failing endpoint's deliveries end in
	// dead_letter within the test.
	p := harness.Start(t, harness.Options{Env: map[string]string{"WEBHOOK_RETRY_SCHEDULE": "0s,100ms,100ms,100ms,100ms"}})
	w := newAnalyticsWorld(t, p)
	secret := fiatSecret(t, p)

	type member struct {
		u        harness.User
		kzt, usd string
	}
	ms := make([]member, 8)
	for i := range ms {
		u := p.Register(t, fmt.Sprintf("analyst-%d", i))
		ms[i] = member{u: u, kzt: fiatCreateWallet(t, p, u, "KZT")}
		fiatDeposit(t, p, secret, u, ms[i].kzt, 5_000_000)
		if i < 3 {
			ms[i].usd = fiatCreateWallet(t, p, u, "USD")
			analyticsDepositUSD(t, p, secret, u, ms[i].usd, 1_000_000)
		}
	}
	failing := make([]int, 10_000)
	for i := range failing {
		failing[i] = http.StatusInternalServerError
	}
	subscribeWebhook(t, p, ms[0].u, newHookReceiver(t).URL(), hookSecret, []string{"transfer.completed"})
	subscribeWebhook(t, p, ms[1].u, newHookReceiver(t, failing...).URL(), hookSecret, []string{"transfer.completed"})
	camp := charityActiveCampaign(t, p, ms[0].u, "analytics", 40_000)
	pending := p.Post(t, "/api/charity/campaigns", ms[1].u.Token, map[string]any{"title": "Not yet", "description": "d",
		"category": "pending", "goalKzt": 1000})
	if pending.Status != http.StatusCreated {
		t.Fatalf("pending campaign: %d %s", pending.Status, pending.Body)
	}
	govAdmin := p.RegisterEmail(t, harness.GovAdminEmail)
	proposal := func(author harness.User, title string) govProposal {
		return govCreate(t, p, author.Token, map[string]any{"title": title, "summary": "s", "body": "b",
			"category": "analytics", "voteMode": "yes-no-abstain", "quorum": 3, "threshold": 0.5})
	}
	closed, open := proposal(ms[1].u, "Closed one"), proposal(ms[2].u, "Open one")
	proposal(ms[3].u, "A draft")
	govAct(t, p, govAdmin.Token, closed.ID, "open", http.StatusOK)
	govAct(t, p, govAdmin.Token, open.ID, "open", http.StatusOK)
	for i, m := range ms[2:6] {
		if r := govVote(t, p, m.u.Token, closed.ID, map[string]any{"choice": []string{"yes", "no"}[i%2]}); r.Status != http.StatusCreated {
			t.Fatalf("vote: %d %s", r.Status, r.Body)
		}
	}
	govAct(t, p, govAdmin.Token, closed.ID, "close", http.StatusOK)

	// Money moves: transfers in both currencies and donations, from
	// several clients at once; a request that fails (the platform is
	// down) is retried with its Idempotency-Key.
	client := &http.Client{Timeout: 10 * time.Second}
	post := func(m member, path, key string, body any) (int, error) {
		raw, _ := json.Marshal(body)
		req, err := http.NewRequest(http.MethodPost, p.BaseURL+path, bytes.NewReader(raw))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+m.u.Token)
		req.Header.Set("Idempotency-Key", key)
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	load := func(round string, n int, midway func()) {
		var next, done, failed atomic.Int64
		var once sync.Once
		var wg sync.WaitGroup
		deadline := time.Now().Add(90 * time.Second)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1) - 1)
					if i >= n {
						return
					}
					from, to := ms[i%len(ms)], ms[(i*3+1)%len(ms)]
					if from.u.ID == to.u.ID {
						to = ms[(i+1)%len(ms)]
					}
					key := fmt.Sprintf("%s-%d-%s", round, i, ksuid.New().String()[:8])
					path, body := "/api/fiat/transfer", any(map[string]any{"fromWalletId": from.kzt, "toEmail": to.u.Email, "amountKzt": 100 + i})
					switch {
					case i%7 == 0:
						path, body = "/api/charity/campaigns/"+camp.ID+"/donations", map[string]any{"walletId": from.kzt, "amountKzt": 250}
					case i%5 == 0 && from.usd != "":
						body = map[string]any{"fromWalletId": from.usd, "toEmail": to.u.Email, "amountKzt": 30 + i}
					}
					for {
						status, err := post(from, path, key, body)
						if err == nil && status < 500 {
							if status >= 300 {
								failed.Add(1)
							}
							break
						}
						if time.Now().After(deadline) {
							failed.Add(1)
							break
						}
						time.Sleep(100 * time.Millisecond)
					}
					if done.Add(1) == int64(n/3) && midway != nil {
						once.Do(midway)
					}
				}
			}()
		}
		wg.Wait()
		if f := failed.Load(); f > 0 {
			t.Fatalf("%s: %d of %d requests failed", round, f, n)
		}
	}

	load("quiet", 60, nil)
	w.quiesce(t)
	w.compare(t, "before the crash")

	// Up to three crash rounds: a SIGKILL lands between a batch's insert
	// and its offset commit often but not always; the first round that
	// leaves rows redelivered on disk ends them.
	for round := 1; round <= 3; round++ {
		var midInsert bool
		load(fmt.Sprintf("crash%d", round), 160, func() {
			// Kill while the sink inserts a batch's rows of a table
			// after events (so the batch's events are in and its
			// offsets are not committed: the batch comes again), or at
			// the latest after 5 s.
			stop := time.Now().Add(5 * time.Second)
			for time.Now().Before(stop) && !midInsert {
				var n uint64
				_ = w.ch.QueryRow(context.Background(), `SELECT count() FROM system.processes
WHERE query LIKE ? AND query NOT LIKE ?`, "INSERT INTO "+w.db+".%", "INSERT INTO "+w.db+".events %").Scan(&n)
				midInsert = n > 0
			}
			p.Kill()
			time.Sleep(200 * time.Millisecond)
			p.Restart()
		})
		if round == 1 {
			// Votes after the restart, on the proposal still open.
			for _, m := range ms[4:6] {
				if r := govVote(t, p, m.u.Token, open.ID, map[string]any{"choice": "yes"}); r.Status != http.StatusCreated {
					t.Fatalf("vote: %d %s", r.Status, r.Body)
				}
			}
		}
		w.quiesce(t)
		var rows, ids uint64
		if err := w.ch.QueryRow(context.Background(), `SELECT count(), uniqExact(id) FROM `+w.db+`.events`).Scan(&rows, &ids); err != nil {
			t.Fatal(err)
		}
		t.Logf("SIGKILL %d (during a sink insert: %v): %d event rows on disk for %d event ids (%d redelivered and inserted again)",
			round, midInsert, rows, ids, rows-ids)
		w.compare(t, fmt.Sprintf("after SIGKILL %d", round))
		if rows > ids {
			break
		}
	}

	// Whatever the kill hit, insert every row once more, as a crash right
	// after an insert and before its offset commit does.
	for _, table := range []string{clickhouse.TableEvents, clickhouse.TableLedger, clickhouse.TableReputation,
		clickhouse.TableUsers, clickhouse.TableWallets, clickhouse.TableCampaigns, clickhouse.TableProposals,
		clickhouse.TableWebhookDeliveries} {
		if err := w.ch.Exec(context.Background(), `INSERT INTO `+w.db+`.`+table+` SELECT * FROM `+w.db+`.`+table); err != nil {
			t.Fatalf("duplicate %s: %v", table, err)
		}
	}
	w.compare(t, "with every row on disk twice")
}

// analyticsDepositUSD tops a USD wallet up through the processor webhook.
func analyticsDepositUSD(t *testing.T, p *harness.Platform, secret string, u harness.User, walletID string, amount int64) {
	t.Helper()
	r := p.Post(t, "/api/fiat/deposit", u.Token, map[string]any{"walletId": walletID, "amount": amount})
	if r.Status != http.StatusCreated {
		t.Fatalf("deposit: %d %s", r.Status, r.Body)
	}
	ev := fiatEvent(t, "evt_"+ksuid.New().String(), r.JSON(t)["depositId"].(string), amount, "usd")
	if wh := fiatSignedWebhook(t, p, secret, ev); wh.Status != http.StatusOK {
		t.Fatalf("webhook: %d %s", wh.Status, wh.Body)
	}
}
