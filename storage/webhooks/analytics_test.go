package webhooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/storage/webhooks"
	"github.com/fintech/platform/topics/names"
)

// Every change of a delivery row puts one webhook.delivery.updated with the
// row's new state on analytics.webhooks, in the same transaction; a write
// that changes nothing puts none.
func TestDeliveryChangesForAnalytics(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	st := webhooks.NewStore(pool)
	ctx := context.Background()
	u := addUser(t, pool, "changes@example.com")
	now := time.Now().UTC().Truncate(time.Millisecond)
	sub, _, err := st.SavePrimary(ctx, webhooks.Subscription{ID: schemas.NewID(), UserID: u, URL: "https://a.example",
		Secret: "secret-0123456789ab", CreatedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	ev := webhooks.Event{ID: schemas.NewID(), Type: "transfer.completed", Module: "fiat", Data: []byte(`{}`), OccurredAt: now}
	pairs := []webhooks.NewDelivery{{SubscriptionID: sub.ID, EventID: ev.ID}}
	for range 2 { // the second records nothing new
		if _, err := st.Record(ctx, []webhooks.Event{ev}, pairs, now); err != nil {
			t.Fatal(err)
		}
	}
	jobs, err := st.ClaimDue(ctx, webhooks.Claim{Now: now, Limit: 10, PerSubscription: 10, LeaseUntil: now.Add(time.Minute), Token: "tok"})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claim: %v %v", jobs, err)
	}
	id := jobs[0].DeliveryID
	if ok, err := st.Finish(ctx, id, "tok", webhooks.Result{Status: webhooks.StatusDeadLetter, Attempts: 1, StatusCode: 500, At: now.Add(time.Second)}); !ok || err != nil {
		t.Fatalf("finish: %v %v", ok, err)
	}
	if ok, err := st.Finish(ctx, id, "stale", webhooks.Result{Status: webhooks.StatusDelivered, Attempts: 2, At: now.Add(2 * time.Second)}); ok || err != nil {
		t.Fatalf("finish under a lost claim: %v %v", ok, err)
	}
	if _, err := st.Retry(ctx, id, now.Add(3*time.Second)); err != nil {
		t.Fatal(err)
	}

	rows, err := pool.Query(ctx, `SELECT topic, key, payload FROM outbox WHERE event_type = $1 ORDER BY id`, schemas.TypeWebhookDeliveryUpdated)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var topic, key string
		var payload []byte
		if err := rows.Scan(&topic, &key, &payload); err != nil {
			t.Fatal(err)
		}
		env, err := schemas.Read(payload)
		if err != nil {
			t.Fatal(err)
		}
		var d schemas.WebhookDeliveryUpdated
		if err := json.Unmarshal(env.Data, &d); err != nil {
			t.Fatal(err)
		}
		if topic != names.AnalyticsWebhooks || key != sub.ID || d.DeliveryID != id || d.WebhookID != sub.ID ||
			d.EventID != ev.ID || d.EventType != "transfer.completed" {
			t.Fatalf("change on %s keyed %s: %+v", topic, key, d)
		}
		got = append(got, fmt.Sprintf("%s/%d/%d/%s", d.Status, d.Attempts, d.LastStatusCode, d.UpdatedAt.Sub(now)))
	}
	want := []string{"pending/0/0/0s", "dead_letter/1/500/1s", "pending/1/500/3s"}
	if len(got) != len(want) {
		t.Fatalf("changes %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("changes %v, want %v", got, want)
		}
	}
}
