package clickhouse

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// fillBench makes 100,000 events as the sink writes them (the events
// table, and the reputation and dimension rows they carry), plus 10,000 of
// them inserted a second time, as a crash's redelivery does: 1,000 users,
// 1,300 wallets (KZT and USD), 50 campaigns (2 events each), 40 closed
// proposals (3 each), 55,000 transfers, 7,480 donations, 30,000 score
// updates (2,000 of them gov-voter) and 5,000 webhook delivery changes
// (2,500 deliveries to 20 subscriptions, queued then delivered or failed),
// over 30 days.
func fillBench(ins func(Rows) error) error {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return start.Add(time.Duration(i%(30*86400)) * time.Second) }
	var r Rows
	id := 0
	ev := func(topic, typ, actor, data string, t time.Time) {
		id++
		r.Events = append(r.Events, EventRow{ID: fmt.Sprintf("ev%08d", id), Topic: topic, Type: typ,
			ActorUserID: actor, OccurredAt: t, Data: data})
	}
	user := func(i int) string { return fmt.Sprintf("user%04d", i%1000) }
	for i := range 1000 {
		r.Users = append(r.Users, UserRow{UserID: user(i), DisplayName: fmt.Sprintf("User %d", i), RegisteredAt: at(i * 997), Version: 1})
		ev("events.identity", "user.registered", user(i), `{"userId":"`+user(i)+`"}`, at(i*997))
	}
	wallet := func(i int) string { return fmt.Sprintf("wallet%04d", i%1300) }
	for i := range 1300 {
		cur := "KZT"
		if i >= 1000 {
			cur = "USD"
		}
		r.Wallets = append(r.Wallets, WalletRow{WalletID: wallet(i), OwnerUserID: user(i), Currency: cur, Kind: "user", CreatedAt: at(i), Version: 1})
		ev("events.fiat", "wallet.created", user(i), `{"walletId":"`+wallet(i)+`"}`, at(i))
	}
	for i := range 50 {
		for v := uint64(1); v <= 2; v++ {
			r.Campaigns = append(r.Campaigns, CampaignRow{CampaignID: fmt.Sprintf("camp%02d", i), ProposerUserID: user(i),
				Title: fmt.Sprintf("Campaign %d", i), Category: "c", GoalKzt: 1_000_000, Status: []string{"", "pending", "active"}[v],
				UpdatedAt: at(i), Version: v})
			ev("events.charity", "campaign.created", user(i), `{}`, at(i))
		}
	}
	for i := range 40 {
		for v := uint64(1); v <= 3; v++ {
			r.Proposals = append(r.Proposals, ProposalRow{ProposalID: fmt.Sprintf("prop%02d", i), AuthorUserID: user(i),
				Title: fmt.Sprintf("Proposal %d", i), Category: "g", VoteMode: "yes-no-abstain",
				Status: []string{"", "draft", "open", "executed"}[v], Quorum: 10, Ballots: 50, QuorumMet: v == 3,
				UpdatedAt: at(i), Version: v})
			ev("events.gov", "proposal.created", user(i), `{}`, at(i))
		}
	}
	for i := range 55_000 {
		ev("events.fiat", "transfer.completed", user(i),
			fmt.Sprintf(`{"txId":"tx%d","fromWallet":"%s","toWallet":"%s","amountKzt":%d,"feeKzt":%d,"description":""}`,
				i, wallet(i*7), wallet(i*13), 100+i%5000, 1), at(i*41))
	}
	for i := range 7_480 {
		ev("events.charity", "donation.received", user(i),
			fmt.Sprintf(`{"donationId":"d%d","campaignId":"camp%02d","category":"c","amountKzt":%d}`, i, i%50, 500+i%700), at(i*53))
	}
	seq := map[string]int64{}
	for i := range 2_500 {
		for step, status := range []string{"pending", []string{"delivered", "failed"}[i%2]} {
			t := at(i*61 + step)
			ev("analytics.webhooks", "webhook.delivery.updated", "", `{}`, t)
			r.WebhookDeliveries = append(r.WebhookDeliveries, WebhookDeliveryRow{DeliveryID: fmt.Sprintf("del%05d", i),
				WebhookID: fmt.Sprintf("hook%02d", i%20), EventID: fmt.Sprintf("ev%08d", i), EventType: "transfer.completed",
				Status: status, Attempts: int64(step), LastStatusCode: int64([]int{0, 200}[step]), UpdatedAt: t})
		}
	}
	for i := range 30_000 {
		u, kind, src := user(i*17), "wallet-active", ""
		if i < 2000 {
			kind, src = "gov-voter", fmt.Sprintf("prop%02d", i%40)
		}
		seq[u]++
		ev("events.reputation", "score.updated", u, `{}`, at(i*29))
		r.Reputation = append(r.Reputation, ReputationRow{ID: r.Events[len(r.Events)-1].ID, EventID: fmt.Sprintf("re%d", i),
			UserID: u, Kind: kind, SourceModule: "fiat", Weight: 1, NewScore: seq[u], NewRank: "seedling", Seq: seq[u],
			OccurredAt: at(i * 29), SourceID: src})
	}
	if len(r.Events) != 100_000 {
		return fmt.Errorf("made %d events, want 100,000", len(r.Events))
	}
	for from := 0; from < len(r.Events); from += 20_000 {
		if err := ins(Rows{Events: r.Events[from:min(from+20_000, len(r.Events))]}); err != nil {
			return err
		}
	}
	if err := ins(Rows{Reputation: r.Reputation, Users: r.Users, Wallets: r.Wallets, Campaigns: r.Campaigns,
		Proposals: r.Proposals, WebhookDeliveries: r.WebhookDeliveries}); err != nil {
		return err
	}
	// The redelivery of 10,000 of them.
	return ins(Rows{Events: r.Events[50_000:60_000], Reputation: r.Reputation[:5_000], WebhookDeliveries: r.WebhookDeliveries[:1_000]})
}

// BenchmarkViewQueries times the analytics guide's view queries on 100,000
// events. Run: go test -run '^$' -bench BenchmarkViewQueries -benchtime 1x
// -count 3 ./storage/clickhouse (the median of the 3 is the figure).
func BenchmarkViewQueries(b *testing.B) {
	ctx := context.Background()
	conn, db := testDB(b)
	if err := EnsureViews(ctx, conn, db); err != nil {
		b.Fatal(err)
	}
	if err := fillBench(func(r Rows) error { return Insert(ctx, conn, db, r) }); err != nil {
		b.Fatal(err)
	}
	var rows, ids uint64
	if err := conn.QueryRow(ctx, `SELECT count(), uniqExact(id) FROM `+db+`.events`).Scan(&rows, &ids); err != nil ||
		rows != 110_000 || ids != 100_000 {
		b.Fatalf("events table holds %d rows of %d ids (%v), want 110,000 of 100,000", rows, ids, err)
	}
	raw, err := os.ReadFile("../../consumers/sink/README.md")
	if err != nil {
		b.Fatal(err)
	}
	queries := regexp.MustCompile("(?s)<!-- query: ([a-z_]+) -->\\s*```sql\\n(.*?)```").FindAllStringSubmatch(string(raw), -1)
	if len(queries) < 4 {
		b.Fatalf("%d view queries in the guide", len(queries))
	}
	for _, q := range queries {
		sql := strings.TrimSuffix(strings.ReplaceAll(strings.TrimSpace(q[2]), "platform.", db+"."), ";")
		b.Run(q[1], func(b *testing.B) {
			for range b.N {
				rows, err := conn.Query(ctx, sql)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for rows.Next() {
					n++
				}
				rows.Close()
				if n == 0 {
					b.Fatalf("%s: no rows", q[1])
				}
			}
		})
	}
}
