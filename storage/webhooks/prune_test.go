package webhooks_test

import (
	"context"
	"testing"
	"time"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/storage/webhooks"
)

// TestPruneFinished: finished deliveries older than the retention go, test
// deliveries sooner, unfinished ones never; then the events nothing names.
func TestPruneFinished(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	st := webhooks.NewStore(pool)
	ctx := context.Background()
	u := addUser(t, pool, "prune@example.com")
	sub, _, err := st.SavePrimary(ctx, webhooks.Subscription{ID: schemas.NewID(), UserID: u, URL: "https://a.example",
		Secret: "s", CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	rows := []struct {
		id, typ, status string
		age             time.Duration
	}{
		{"old-delivered", "transfer.completed", "delivered", 40 * 24 * time.Hour},
		{"old-dead", "transfer.completed", "dead_letter", 40 * 24 * time.Hour},
		{"old-failed", "transfer.completed", "failed", 40 * 24 * time.Hour}, // attempts left: kept
		{"recent-delivered", "transfer.completed", "delivered", 24 * time.Hour},
		{"test-week-old", schemas.TypeWebhookTest, "delivered", 8 * 24 * time.Hour},
		{"test-recent", schemas.TypeWebhookTest, "delivered", time.Hour},
	}
	for _, r := range rows {
		at := now.Add(-r.age)
		if _, err := pool.Exec(ctx, `INSERT INTO webhook_events (event_id, type, module, data, occurred_at, created_at)
VALUES ($1, $2, 'fiat', '{}', $3, $3)`, "ev-"+r.id, r.typ, at); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO webhook_deliveries (id, subscription_id, event_id, status, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $5)`, r.id, sub.ID, "ev-"+r.id, r.status, at); err != nil {
			t.Fatal(err)
		}
	}
	n, err := st.PruneFinished(ctx, now.Add(-30*24*time.Hour), now.Add(-7*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if n != 6 { // 3 deliveries and their 3 events
		t.Fatalf("pruned %d rows, want 6", n)
	}
	var left []string
	r, err := pool.Query(ctx, `SELECT d.id FROM webhook_deliveries d JOIN webhook_events e USING (event_id) ORDER BY d.id`)
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		var id string
		_ = r.Scan(&id)
		left = append(left, id)
	}
	want := []string{"old-failed", "recent-delivered", "test-recent"}
	if len(left) != len(want) || left[0] != want[0] || left[1] != want[1] || left[2] != want[2] {
		t.Fatalf("left %v, want %v", left, want)
	}
	var events int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM webhook_events`).Scan(&events); err != nil || events != 3 {
		t.Fatalf("%d events left (%v), want 3", events, err)
	}
}
