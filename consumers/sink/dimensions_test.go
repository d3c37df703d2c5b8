package sink

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/clickhouse"
	"github.com/fintech/platform/topics"
)

func TestConvertDimensions(t *testing.T) {
	now := time.Date(2026, 5, 4, 3, 2, 1, 0, time.UTC)
	var recs []*kgo.Record
	add := func(topic, typ, key string, data any) {
		env, err := schemas.New(typ, key, "", data, now)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := topics.Record(topic, env)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	add(topics.EventsIdentity, schemas.TypeUserRegistered, "u1", schemas.UserRegistered{UserID: "u1", Email: "ann@example.com", Name: "Ann"})
	add(topics.EventsFiat, schemas.TypeWalletCreated, "w1", schemas.WalletCreated{WalletID: "w1", UserID: "u1", Currency: "USD", Kind: "user", CreatedAt: now})
	add(topics.EventsCharity, schemas.TypeCampaignApproved, "c1", schemas.CampaignEvent{CampaignID: "c1", ProposerUserID: "u1", Title: "T", Category: "k", GoalKzt: 9, Status: "active"})
	add(topics.EventsGov, schemas.TypeProposalRejected, "p1", schemas.ProposalEvent{ProposalID: "p1", AuthorUserID: "u1", Title: "P", Status: "rejected", Quorum: 3, Ballots: 2, Threshold: "0.5"})
	add(topics.EventsReputation, schemas.TypeScoreUpdated, "u1", schemas.ScoreUpdated{EventID: "r1", UserID: "u1", Kind: "gov-voter", Seq: 1, SourceID: "p1"})
	add(topics.AnalyticsWebhooks, schemas.TypeWebhookDeliveryUpdated, "h1", schemas.WebhookDeliveryUpdated{DeliveryID: "d1", WebhookID: "h1", Status: "delivered", Attempts: 1, LastStatusCode: 200, UpdatedAt: now})
	rows, _ := Convert(recs, slog.New(slog.NewTextHandler(io.Discard, nil)))

	if len(rows.Events) != 6 {
		t.Fatalf("%d event rows, want 6", len(rows.Events))
	}
	if len(rows.Users) != 1 || rows.Users[0] != (clickhouse.UserRow{UserID: "u1", DisplayName: "Ann", RegisteredAt: now, Version: 1}) {
		t.Fatalf("users %+v", rows.Users)
	}
	for _, u := range rows.Users {
		if strings.Contains(u.DisplayName+u.UserID, "@") {
			t.Fatalf("an e-mail reached the users dimension: %+v", u)
		}
	}
	if len(rows.Wallets) != 1 || rows.Wallets[0] != (clickhouse.WalletRow{WalletID: "w1", OwnerUserID: "u1", Currency: "USD", Kind: "user", CreatedAt: now, Version: 1}) {
		t.Fatalf("wallets %+v", rows.Wallets)
	}
	if len(rows.Campaigns) != 1 || rows.Campaigns[0].Status != "active" || rows.Campaigns[0].Version != clickhouse.VersionOpened {
		t.Fatalf("campaigns %+v", rows.Campaigns)
	}
	if len(rows.Proposals) != 1 || rows.Proposals[0].Status != "rejected" || rows.Proposals[0].Ballots != 2 || rows.Proposals[0].Version != clickhouse.VersionClosed {
		t.Fatalf("proposals %+v", rows.Proposals)
	}
	if len(rows.Reputation) != 1 || rows.Reputation[0].SourceID != "p1" {
		t.Fatalf("reputation %+v", rows.Reputation)
	}
	if len(rows.WebhookDeliveries) != 1 || rows.WebhookDeliveries[0].Status != "delivered" || rows.WebhookDeliveries[0].LastStatusCode != 200 {
		t.Fatalf("webhook deliveries %+v", rows.WebhookDeliveries)
	}
}
