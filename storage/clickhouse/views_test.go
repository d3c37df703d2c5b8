package clickhouse

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// viewFixture is a small world, inserted twice (the sink's redelivery after
// a crash) with a stale dimension row inserted after the newer one.
func viewFixture(t *testing.T) (driver.Conn, string) {
	t.Helper()
	conn, db := testDB(t)
	ctx := context.Background()
	if err := EnsureViews(ctx, conn, db); err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 3, 1, 23, 59, 59, 0, time.UTC)
	ev := func(id, topic, typ, actor, data string, at time.Time) EventRow {
		return EventRow{ID: id, Topic: topic, Type: typ, ActorUserID: actor, OccurredAt: at, Data: data}
	}
	rows := Rows{
		Users: []UserRow{{UserID: "u1", DisplayName: "Ann", RegisteredAt: day, Version: 1},
			{UserID: "u2", DisplayName: "Bob", RegisteredAt: day.Add(time.Second), Version: 1}},
		Wallets: []WalletRow{{WalletID: "w1", OwnerUserID: "u1", Currency: "KZT", Kind: "user", CreatedAt: day, Version: 1},
			{WalletID: "w2", OwnerUserID: "u2", Currency: "USD", Kind: "user", CreatedAt: day, Version: 1}},
		Campaigns: []CampaignRow{{CampaignID: "c1", ProposerUserID: "u2", Title: "Wells", Category: "water", GoalKzt: 1000,
			Status: "active", UpdatedAt: day, Version: VersionOpened}},
		Proposals: []ProposalRow{{ProposalID: "p1", AuthorUserID: "u1", Title: "Parks", Category: "city",
			VoteMode: "yes-no-abstain", Status: "executed", Quorum: 2, Ballots: 2, QuorumMet: true, Passing: true,
			UpdatedAt: day, Version: VersionClosed}},
		Events: []EventRow{
			ev("e1", "events.fiat", "transfer.completed", "u1", `{"txId":"t1","fromWallet":"w1","toWallet":"w9","amountKzt":500,"feeKzt":1}`, day),
			ev("e2", "events.fiat", "transfer.completed", "u1", `{"txId":"t2","fromWallet":"w1","toWallet":"w9","amountKzt":300,"feeKzt":1}`, day.Add(time.Second)),
			ev("e3", "events.fiat", "transfer.completed", "u2", `{"txId":"t3","fromWallet":"w2","toWallet":"w9","amountKzt":70,"feeKzt":0}`, day),
			ev("e4", "events.charity", "donation.received", "u1", `{"donationId":"d1","campaignId":"c1","amountKzt":400}`, day),
			ev("e5", "events.charity", "donation.received", "u1", `{"donationId":"d2","campaignId":"c1","amountKzt":150}`, day),
		},
		WebhookDeliveries: []WebhookDeliveryRow{
			{DeliveryID: "d1", WebhookID: "h1", EventID: "e1", EventType: "transfer.completed", Status: "delivered",
				Attempts: 1, LastStatusCode: 200, UpdatedAt: day.Add(time.Second)},
			{DeliveryID: "d1", WebhookID: "h1", EventID: "e1", EventType: "transfer.completed", Status: "pending", UpdatedAt: day},
			{DeliveryID: "d2", WebhookID: "h1", EventID: "e2", EventType: "transfer.completed", Status: "pending", UpdatedAt: day},
			{DeliveryID: "d2", WebhookID: "h1", EventID: "e2", EventType: "transfer.completed", Status: "failed",
				Attempts: 1, LastStatusCode: 500, UpdatedAt: day.Add(2 * time.Second)},
		},
		Reputation: []ReputationRow{
			{ID: "r1", EventID: "x1", UserID: "u1", Kind: "gov-voter", Weight: 1, NewScore: 1, NewRank: "seedling", Seq: 1, OccurredAt: day, SourceID: "p1"},
			{ID: "r2", EventID: "x2", UserID: "u2", Kind: "gov-voter", Weight: 1, NewScore: 1, NewRank: "seedling", Seq: 1, OccurredAt: day, SourceID: "p1"},
			{ID: "r3", EventID: "x3", UserID: "u1", Kind: "wallet-active", Weight: 1, NewScore: 2, NewRank: "seedling", Seq: 2, OccurredAt: day},
		},
	}
	for range 2 {
		if err := Insert(ctx, conn, db, rows); err != nil {
			t.Fatal(err)
		}
	}
	// An older step of c1 and p1 arriving late loses to the newer one.
	stale := Rows{
		Campaigns: []CampaignRow{{CampaignID: "c1", ProposerUserID: "u2", Title: "Wells", Category: "water", GoalKzt: 1000,
			Status: "pending", UpdatedAt: day, Version: VersionCreated}},
		Proposals: []ProposalRow{{ProposalID: "p1", AuthorUserID: "u1", Title: "Parks", Category: "city",
			VoteMode: "yes-no-abstain", Status: "draft", Quorum: 2, UpdatedAt: day, Version: VersionCreated}},
	}
	if err := Insert(ctx, conn, db, stale); err != nil {
		t.Fatal(err)
	}
	return conn, db
}

func queryStrings(t *testing.T, conn driver.Conn, q string) []string {
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
		parts := make([]string, len(vals))
		for i, v := range vals {
			x := reflect.ValueOf(v).Elem().Interface()
			if tm, ok := x.(time.Time); ok {
				x = tm.UTC().Format("2006-01-02")
			}
			parts[i] = fmt.Sprint(x)
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestViewsDeduplicateAndJoin(t *testing.T) {
	conn, db := viewFixture(t)
	for _, c := range []struct{ q, want string }{
		{`SELECT day, currency, transfers, minor_units, fee_minor_units FROM ` + db + `.v_daily_volume ORDER BY currency, day`,
			"2026-03-01|KZT|1|500|1 2026-03-02|KZT|1|300|1 2026-03-01|USD|1|70|0"},
		{`SELECT user_id, display_name, registered_on, score, rank, events FROM ` + db + `.v_leaderboard ORDER BY score DESC, user_id`,
			"u1|Ann|2026-03-01|2|seedling|2 u2|Bob|2026-03-02|1|seedling|1"},
		{`SELECT campaign_id, title, status, proposer_name, goal_kzt, raised_kzt, percent, donations, donors FROM ` + db + `.v_campaign_progress`,
			"c1|Wells|active|Bob|1000|550|55|2|1"},
		{`SELECT proposal_id, title, status, author_name, quorum, voters, ballots_at_close, quorum_met FROM ` + db + `.v_governance_participation`,
			"p1|Parks|executed|Ann|2|2|2|1"},
		{`SELECT wallet_id, owner_user_id, currency FROM ` + db + `.v_wallets ORDER BY wallet_id`, "w1|u1|KZT w2|u2|USD"},
		{`SELECT webhook_id, deliveries, delivered, pending, failed, dead_letter, attempts FROM ` + db + `.v_webhook_delivery_health`,
			"h1|2|1|0|1|0|2"},
	} {
		got := strings.Join(queryStrings(t, conn, c.q), " ")
		if got != c.want {
			t.Errorf("%s\n got  %s\n want %s", c.q, got, c.want)
		}
	}
}

// Re-running EnsureViews (every sink start) replaces the views in place.
func TestEnsureViewsTwice(t *testing.T) {
	conn, db := viewFixture(t)
	if err := EnsureViews(context.Background(), conn, db); err != nil {
		t.Fatal(err)
	}
	if got := queryStrings(t, conn, `SELECT count() FROM `+db+`.v_leaderboard`); len(got) != 1 || got[0] != "2" {
		t.Fatalf("leaderboard rows after a second EnsureViews: %v", got)
	}
}

// A reputation table made before source_id existed gets the column.
func TestEnsureSchemaAddsSourceID(t *testing.T) {
	conn, db := testDB(t)
	ctx := context.Background()
	if err := conn.Exec(ctx, `DROP TABLE `+db+`.`+TableReputation); err != nil {
		t.Fatal(err)
	}
	if err := conn.Exec(ctx, `CREATE TABLE `+db+`.`+TableReputation+` (
		id String, event_id String, user_id String, kind String, source_module String,
		weight Int64, new_score Int64, previous_rank String, new_rank String, seq UInt64,
		occurred_at DateTime) ENGINE = ReplacingMergeTree() ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := EnsureSchema(ctx, conn, db); err != nil {
			t.Fatal(err)
		}
	}
	if err := Insert(ctx, conn, db, Rows{Reputation: []ReputationRow{{ID: "r", UserID: "u", SourceID: "s", OccurredAt: time.Now()}}}); err != nil {
		t.Fatal(err)
	}
}

// The analytics guide shows every view exactly as it is created.
func TestGuideShowsEveryView(t *testing.T) {
	raw, err := os.ReadFile("../../consumers/sink/README.md")
	if err != nil {
		t.Fatal(err)
	}
	guide := string(raw)
	for _, v := range Views {
		want := "CREATE VIEW platform." + v.Name + " AS\n" + ViewSQL(v, "platform") + ";"
		if !strings.Contains(guide, want) {
			t.Errorf("the guide lacks, verbatim:\n%s", want)
		}
	}
}

// Every other query of the guide runs on this server as written (with the
// test's database for platform).
func TestGuideQueriesRun(t *testing.T) {
	conn, db := viewFixture(t)
	raw, err := os.ReadFile("../../consumers/sink/README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(raw), "```sql\n")[1:]
	n := 0
	for _, b := range blocks {
		q := strings.TrimSpace(b[:strings.Index(b, "```")])
		if strings.HasPrefix(q, "CREATE VIEW") {
			continue
		}
		q = strings.TrimSuffix(strings.ReplaceAll(q, "platform.", db+"."), ";")
		rows, err := conn.Query(context.Background(), q)
		if err != nil {
			t.Errorf("guide query fails: %v\n%s", err, q)
			continue
		}
		for rows.Next() {
		}
		if err := rows.Err(); err != nil {
			t.Errorf("guide query fails: %v\n%s", err, q)
		}
		rows.Close()
		n++
	}
	if n < 10 {
		t.Fatalf("ran %d guide queries, expected the guide's ten or more", n)
	}
}
