package charity_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/charity"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics/names"
)

func create(t *testing.T, s *store.Campaigns, proposer, category string, endsAt *time.Time) store.Campaign {
	t.Helper()
	id := schemas.NewID()
	c := store.Campaign{ID: id, ProposerUserID: proposer, Title: "t " + id, Description: "d", Category: category,
		GoalKzt: 1_000, Media: []string{"https://example.com/a.png"}, EndsAt: endsAt, Status: schemas.CampaignPending,
		WalletID: schemas.CampaignWalletID(id), CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
	env, err := schemas.New(schemas.TypeCampaignCreated, id, proposer, schemas.CampaignEvent{CampaignID: id}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	row, err := pipeline.EventRow(names.EventsCharity, env)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create(context.Background(), c, []pipeline.OutboxRow{row}); err != nil {
		t.Fatal(err)
	}
	return c
}

func approve(t *testing.T, s *store.Campaigns, id string, pin bool) {
	t.Helper()
	if _, err := s.Approve(context.Background(), id, pin, false, time.Now().UTC(),
		func(store.Campaign) ([]pipeline.OutboxRow, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
}

func donation(t *testing.T, pool *pgxpool.Pool, campaign, donor string, amount int64, anonymous bool, at time.Time) {
	t.Helper()
	_, err := pool.Exec(context.Background(), `INSERT INTO charity_donations (id, campaign_id, donor_user_id, wallet_id,
		amount_kzt, anonymous, transaction_id, ledger_entry_id, created_at) VALUES ($1, $2, $3, 'w', $4, $5, $6, $7, $8)`,
		schemas.NewID(), campaign, donor, amount, anonymous, schemas.NewID(), schemas.NewID(), at)
	if err != nil {
		t.Fatal(err)
	}
}

func TestCampaigns(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	s := store.NewCampaigns(pool)
	now := time.Now().UTC()
	past := now.Add(-time.Minute)

	c := create(t, s, "alice", "water", nil)
	got, err := s.Get(ctx, c.ID)
	if err != nil || got.Status != schemas.CampaignPending || len(got.Media) != 1 || got.WalletID != c.WalletID {
		t.Fatalf("get = %+v %v", got, err)
	}
	var kind string
	if err := pool.QueryRow(ctx, `SELECT kind FROM fiat_wallets WHERE id = $1`, c.WalletID).Scan(&kind); err != nil || kind != "campaign" {
		t.Fatalf("campaign wallet kind %q %v", kind, err)
	}
	var queued int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM outbox WHERE event_type = $1`, schemas.TypeCampaignCreated).Scan(&queued); err != nil || queued != 1 {
		t.Fatalf("outbox: %d %v", queued, err)
	}
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, postgres.ErrNotFound) {
		t.Fatalf("unknown: %v", err)
	}
	if _, total, _ := s.List(ctx, store.Filter{Now: now}, nil, 10); total != 0 {
		t.Fatalf("a pending campaign is listed")
	}

	approve(t, s, c.ID, false)
	if _, err := s.Approve(ctx, c.ID, true, true, now, func(store.Campaign) ([]pipeline.OutboxRow, error) { return nil, nil }); !errors.Is(err, store.ErrInvalidState) {
		t.Fatalf("second approve: %v", err)
	}
	if _, err := s.Approve(ctx, "nope", true, true, now, func(store.Campaign) ([]pipeline.OutboxRow, error) { return nil, nil }); !errors.Is(err, postgres.ErrNotFound) {
		t.Fatalf("approve unknown: %v", err)
	}

	// Donors: distinct count includes the anonymous one; recent donors do not.
	donation(t, pool, c.ID, "bob", 10, false, now.Add(-3*time.Second))
	donation(t, pool, c.ID, "carol", 20, true, now.Add(-2*time.Second))
	donation(t, pool, c.ID, "bob", 30, false, now.Add(-1*time.Second))
	if _, err := pool.Exec(ctx, `INSERT INTO users (id, email, name, password_hash, created_at) VALUES ('bob', 'bob@x.io', 'Bob', 'x', now())`); err != nil {
		t.Fatal(err)
	}
	if n, err := s.DonorCount(ctx, c.ID); err != nil || n != 2 {
		t.Fatalf("donorCount = %d %v, want 2", n, err)
	}
	if page, _, _ := s.List(ctx, store.Filter{Category: "water", Now: now}, nil, 10); len(page) != 1 || page[0].DonorCount != 2 {
		t.Fatalf("listed donorCount: %+v", page)
	}
	donors, err := s.RecentDonors(ctx, c.ID, 10)
	if err != nil || len(donors) != 2 || donors[0].AmountKzt != 30 || donors[0].Name != "Bob" || donors[1].AmountKzt != 10 {
		t.Fatalf("recent donors = %+v %v", donors, err)
	}

	// The list: pinned first, newest first, paged by cursor, filtered.
	var all []string
	for i := range 4 {
		x := create(t, s, "dave", "school", nil)
		approve(t, s, x.ID, i == 1)
		all = append(all, x.ID)
	}
	ended := create(t, s, "erin", "school", &past)
	approve(t, s, ended.ID, false)
	// Pinned first, then by id descending (ksuids: newest first, to the second).
	rest := []string{ended.ID, all[0], all[2], all[3]}
	sort.Sort(sort.Reverse(sort.StringSlice(rest)))
	want := append([]string{all[1]}, rest...)
	var seen []string
	var after *store.Cursor
	for {
		page, total, err := s.List(ctx, store.Filter{Category: "school", Now: now}, after, 2)
		if err != nil || total != 5 {
			t.Fatalf("list: total %d %v", total, err)
		}
		for _, p := range page {
			seen = append(seen, p.ID)
		}
		if len(page) < 2 {
			break
		}
		last := page[len(page)-1]
		after = &store.Cursor{Pinned: last.Pinned, ID: last.ID}
	}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("list order %v, want %v", seen, want)
	}
	if page, total, _ := s.List(ctx, store.Filter{Category: "school", Status: "ended", Now: now}, nil, 10); total != 1 || page[0].ID != ended.ID {
		t.Fatalf("ended filter: %d", total)
	}
	if _, total, _ := s.List(ctx, store.Filter{Category: "school", Status: "active", Now: now}, nil, 10); total != 4 {
		t.Fatalf("active filter: %d", total)
	}
	if n, err := s.ActiveCount(ctx, now); err != nil || n != 5 {
		t.Fatalf("active count %d %v", n, err)
	}
}
