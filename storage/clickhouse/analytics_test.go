package clickhouse

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/segmentio/ksuid"
)

// testDB connects the local stack's ClickHouse and creates a database for
// the test, dropped at the end.
func testDB(t testing.TB) (driver.Conn, string) {
	t.Helper()
	addr := os.Getenv("CLICKHOUSE_ADDR")
	if addr == "" {
		addr = "127.0.0.1:19000"
	}
	ctx := context.Background()
	conn, err := Connect(ctx, addr, "default")
	if err != nil {
		t.Fatalf("clickhouse (run `make test`, which starts the local stack): %v", err)
	}
	db := "t_" + strings.ToLower(ksuid.New().String())
	if err := EnsureSchema(ctx, conn, db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db)
		_ = conn.Close()
	})
	return conn, db
}

func TestAnalyticsDedupeAndQueries(t *testing.T) {
	conn, db := testDB(t)
	ctx := context.Background()
	now := time.Now().UTC()
	amt := LedgerRow{ID: "e1", Height: 1, Kind: "fiat:transfer", Timestamp: now.Add(-time.Hour), HasAmount: true, AmountCents: 5}
	rows := Rows{
		Events: []EventRow{{ID: "ev1", Topic: "events.ledger", Type: "ledger.entry_added", OccurredAt: now, Data: `{}`}},
		Ledger: []LedgerRow{amt, amt, // a duplicate
			{ID: "e2", Height: 2, Kind: "fiat:transfer", Timestamp: now.Add(-3 * 24 * time.Hour)},
			{ID: "e3", Height: 3, Kind: "mask:charge", Timestamp: now.Add(-20 * 24 * time.Hour)},
			{ID: "e4", Height: 4, Kind: "mask:charge", Timestamp: now.Add(-40 * 24 * time.Hour)}},
		Reputation: []ReputationRow{
			{ID: "r1", EventID: "x1", UserID: "alice", Weight: 5, NewScore: 5, NewRank: "seedling", Seq: 1, OccurredAt: now.Add(-48 * time.Hour)},
			{ID: "r2", EventID: "x2", UserID: "alice", Weight: 10, NewScore: 15, NewRank: "sprout", Seq: 2, OccurredAt: now},
			{ID: "r2", EventID: "x2", UserID: "alice", Weight: 10, NewScore: 15, NewRank: "sprout", Seq: 2, OccurredAt: now},
			{ID: "r3", EventID: "x3", UserID: "bob", Weight: 60, NewScore: 60, NewRank: "steady", Seq: 1, OccurredAt: now.Add(-48 * time.Hour)},
			{ID: "r4", EventID: "x4", UserID: "carol", Weight: -2, NewScore: -2, NewRank: "seedling", Seq: 1, OccurredAt: now},
		},
	}
	if err := Insert(ctx, conn, db, rows); err != nil {
		t.Fatal(err)
	}
	// The same batch again, as after a redelivery.
	if err := Insert(ctx, conn, db, rows); err != nil {
		t.Fatal(err)
	}

	st, err := QueryLedgerStats(ctx, conn, db, now)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.ByKind["fiat:transfer"]; got != (Windows{1, 2, 2}) {
		t.Fatalf("fiat:transfer %+v", got)
	}
	if got := st.ByKind["mask:charge"]; got != (Windows{0, 0, 1}) {
		t.Fatalf("mask:charge %+v", got)
	}
	if st.Totals != (Windows{1, 2, 3}) {
		t.Fatalf("totals %+v", st.Totals)
	}
	if n, err := LedgerCount(ctx, conn, db); err != nil || n != 4 {
		t.Fatalf("ledger count %d %v", n, err)
	}

	lb, err := QueryLeaderboard(ctx, conn, db, LeaderQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(lb) != 3 || lb[0].UserID != "bob" || lb[1].UserID != "alice" || lb[1].Score != 15 || lb[1].Rank != "sprout" || lb[2].Score != -2 {
		t.Fatalf("leaderboard %+v", lb)
	}
	since := now.Add(-time.Hour)
	lb, err = QueryLeaderboard(ctx, conn, db, LeaderQuery{Limit: 10, Since: &since})
	if err != nil {
		t.Fatal(err)
	}
	if len(lb) != 2 || lb[0].UserID != "alice" || *lb[0].Gained != 10 || lb[1].UserID != "carol" {
		t.Fatalf("leaderboard since %+v", lb)
	}
	lb, err = QueryLeaderboard(ctx, conn, db, LeaderQuery{Limit: 10, Rank: "steady"})
	if err != nil || len(lb) != 1 || lb[0].UserID != "bob" {
		t.Fatalf("leaderboard by rank %+v %v", lb, err)
	}

	dist, recent, err := ReputationDistribution(ctx, conn, db, now.Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(dist) != 3 || dist[0].Score != -2 || dist[2].Score != 60 || recent != 2 {
		t.Fatalf("distribution %+v recent %d", dist, recent)
	}
}
