package partner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/partner"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics/names"
)

func eventOf[T any](typ string) partner.EventFunc[T] {
	return func(row T, userID string) (pipeline.OutboxRow, error) {
		env, err := schemas.New(typ, "k", "", map[string]any{"row": row, "userId": userID}, time.Now())
		if err != nil {
			return pipeline.OutboxRow{}, err
		}
		return pipeline.EventRow(names.EventsPartner, env)
	}
}

func outboxCount(t *testing.T, pool *pgxpool.Pool, typ string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM outbox WHERE event_type = $1`, typ).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRoyaltiesRecordOnceEvenConcurrently(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	st := partner.NewStore(pool)
	now := time.Now().UTC().Truncate(time.Microsecond)
	// alice verified her address; carol registered hers without verifying it.
	if _, err := pool.Exec(ctx, `INSERT INTO users (id, email, password_hash, email_verified_at)
VALUES ('u1', 'Alice@Example.com', 'x', now()), ('u2', 'carol@example.com', 'x', NULL)`); err != nil {
		t.Fatal(err)
	}
	roy := func(id, event string, amount int64) partner.RoyaltyRow {
		return partner.RoyaltyRow{ID: id, EventID: event, Email: "alice@example.com", ProductKey: "p", Period: "2030-01", Amount: amount, PaidAt: now}
	}
	var userSeen string
	got, inserted, err := st.RecordRoyalty(ctx, roy("r1", "e1", 100), func(r partner.RoyaltyRow, userID string) (pipeline.OutboxRow, error) {
		userSeen = userID
		return eventOf[partner.RoyaltyRow](schemas.TypeRoyaltyRecorded)(r, userID)
	})
	if err != nil || !inserted || got.ID != "r1" || userSeen != "u1" {
		t.Fatalf("first: %+v %v %v user %q", got, inserted, err, userSeen)
	}
	// An event names only an account that verified the address.
	carol := partner.RoyaltyRow{ID: "rc", EventID: "ec", Email: "carol@example.com", ProductKey: "p", Period: "2030-01", Amount: 5, PaidAt: now}
	userSeen = "unset"
	if _, _, err := st.RecordRoyalty(ctx, carol, func(r partner.RoyaltyRow, userID string) (pipeline.OutboxRow, error) {
		userSeen = userID
		return eventOf[partner.RoyaltyRow](schemas.TypeRoyaltyRecorded)(r, userID)
	}); err != nil || userSeen != "" {
		t.Fatalf("royalty for an unverified address names user %q (%v)", userSeen, err)
	}
	// A replay with another body answers the first record and records nothing.
	got, inserted, err = st.RecordRoyalty(ctx, roy("r2", "e1", 999), eventOf[partner.RoyaltyRow](schemas.TypeRoyaltyRecorded))
	if err != nil || inserted || got.ID != "r1" || got.Amount != 100 {
		t.Fatalf("replay: %+v %v %v", got, inserted, err)
	}

	// 20 concurrent copies of one delivery record it once, with one event.
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		wins  int
		ids   = map[string]bool{}
		fails []error
	)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r, ins, err := st.RecordRoyalty(ctx, roy(fmt.Sprintf("c%02d", i), "e2", 50), eventOf[partner.RoyaltyRow](schemas.TypeRoyaltyRecorded))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				fails = append(fails, err)
				return
			}
			ids[r.ID] = true
			if ins {
				wins++
			}
		}(i)
	}
	wg.Wait()
	if len(fails) > 0 || wins != 1 || len(ids) != 1 {
		t.Fatalf("concurrent: wins %d ids %v errors %v", wins, ids, fails)
	}
	if n := outboxCount(t, pool, schemas.TypeRoyaltyRecorded); n != 3 {
		t.Fatalf("outbox has %d royalty events, want 3 (alice's two, carol's one)", n)
	}

	rows, total, err := st.Royalties(ctx, "alice@example.com", schemas.Position{}, 1)
	if err != nil || total != 2 || len(rows) != 1 {
		t.Fatalf("page 1: %v %d %v", rows, total, err)
	}
	rows2, _, err := st.Royalties(ctx, "alice@example.com", schemas.Position{At: rows[0].RecordedAt, ID: rows[0].ID}, 10)
	older := len(rows2) == 1 && (rows2[0].RecordedAt.Before(rows[0].RecordedAt) ||
		(rows2[0].RecordedAt.Equal(rows[0].RecordedAt) && rows2[0].ID < rows[0].ID))
	if err != nil || len(rows2) != 1 || !older {
		t.Fatalf("page 2: %v %v", rows2, err)
	}
	if rows, total, _ := st.Royalties(ctx, "bob@example.com", schemas.Position{}, 10); total != 0 || len(rows) != 0 {
		t.Fatalf("bob sees %v", rows)
	}
}

func TestPodiumReplaysPartlyAndConcurrently(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	st := partner.NewStore(pool)
	now := time.Now().UTC().Truncate(time.Microsecond)
	entry := func(id string, place int, email string, amount int64) partner.PrizeRow {
		return partner.PrizeRow{ID: id, TournamentID: "t1", Place: place, Email: email, Amount: amount, FinalizedAt: now}
	}
	ev := eventOf[partner.PrizeRow](schemas.TypePrizeRecorded)
	rec, rep, err := st.RecordPodium(ctx, []partner.PrizeRow{entry("p2", 2, "b@x.io", 20), entry("p1", 1, "a@x.io", 30)}, ev)
	if err != nil || len(rec) != 2 || len(rep) != 0 || rec[0].Place != 1 {
		t.Fatalf("first: %v %v %v", rec, rep, err)
	}
	rec, rep, err = st.RecordPodium(ctx, []partner.PrizeRow{entry("q2", 2, "b@x.io", 99), entry("q3", 3, "c@x.io", 10)}, ev)
	if err != nil || len(rec) != 1 || rec[0].ID != "q3" || len(rep) != 1 || rep[0].ID != "p2" || rep[0].Amount != 20 {
		t.Fatalf("partial replay: %v %v %v", rec, rep, err)
	}
	// The same place for another e-mail (a tie) is a new entry.
	rec, _, err = st.RecordPodium(ctx, []partner.PrizeRow{entry("r3", 3, "d@x.io", 10)}, ev)
	if err != nil || len(rec) != 1 {
		t.Fatalf("tie: %v %v", rec, err)
	}
	// Concurrent copies of a podium of 5 in different orders record 5 entries once.
	var wg sync.WaitGroup
	var mu sync.Mutex
	recorded := 0
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var es []partner.PrizeRow
			for k := 0; k < 5; k++ {
				place := (k+i)%5 + 1
				e := entry(fmt.Sprintf("x%d-%d", i, place), place, fmt.Sprintf("p%d@x.io", place), 5)
				e.TournamentID = "t2"
				es = append(es, e)
			}
			rec, rep, err := st.RecordPodium(ctx, es, ev)
			mu.Lock()
			defer mu.Unlock()
			if err != nil || len(rec)+len(rep) != 5 {
				t.Errorf("copy %d: %d+%d %v", i, len(rec), len(rep), err)
			}
			recorded += len(rec)
		}(i)
	}
	wg.Wait()
	if recorded != 5 {
		t.Fatalf("concurrent podiums recorded %d entries, want 5", recorded)
	}
	if n := outboxCount(t, pool, schemas.TypePrizeRecorded); n != 4+5 {
		t.Fatalf("outbox has %d prize events, want 9", n)
	}
	rows, total, err := st.Prizes(ctx, "b@x.io", schemas.Position{}, 10)
	if err != nil || total != 1 || rows[0].Amount != 20 {
		t.Fatalf("b's prizes: %v %d %v", rows, total, err)
	}
}

func TestTournamentsAndUpcoming(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	st := partner.NewStore(pool)
	now := time.Now().UTC().Truncate(time.Second)
	ev := func(tr partner.TournamentRow) (pipeline.OutboxRow, error) {
		return eventOf[partner.TournamentRow](schemas.TypeTournamentPublished)(tr, "")
	}
	tour := func(id string, starts time.Time, capacity, entries int) partner.TournamentRow {
		return partner.TournamentRow{ID: id, StartsAt: starts, Format: "swiss", PrizePool: 1000, Capacity: capacity, Entries: entries}
	}
	for _, tc := range []struct {
		t    partner.TournamentRow
		want partner.Publication
	}{
		{tour("soon", now.Add(time.Hour), 10, 3), partner.Created},
		{tour("soon", now.Add(time.Hour), 10, 3), partner.Unchanged},
		{tour("soon", now.Add(time.Hour), 10, 4), partner.Updated},
		{tour("later", now.Add(48*time.Hour), 10, 0), partner.Created},
		{tour("full", now.Add(time.Hour), 10, 10), partner.Created},
		{tour("past", now.Add(-time.Hour), 10, 0), partner.Created},
	} {
		got, outcome, err := st.PublishTournament(ctx, tc.t, now, ev)
		if err != nil || outcome != tc.want || got.Entries != tc.t.Entries {
			t.Fatalf("%s: %+v %v %v, want %v", tc.t.ID, got, outcome, err, tc.want)
		}
	}
	if n := outboxCount(t, pool, schemas.TypeTournamentPublished); n != 5 {
		t.Fatalf("outbox has %d tournament events, want 5", n)
	}
	up, err := st.Upcoming(ctx, now, 50)
	if err != nil || len(up) != 2 || up[0].ID != "soon" || up[0].Entries != 4 || up[1].ID != "later" {
		t.Fatalf("upcoming: %+v %v", up, err)
	}
}

func TestEarningsAndCertStats(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	st := partner.NewStore(pool)
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	e, err := st.Earnings(ctx, "z@x.io")
	if err != nil || e.Rights.Count != 0 || e.Rights.Last != nil || e.Cert.Amount != 0 {
		t.Fatalf("empty earnings: %+v %v", e, err)
	}
	mustRoyalty := func(id string, amount int64, at time.Time) {
		if _, _, err := st.RecordRoyalty(ctx, partner.RoyaltyRow{ID: id, EventID: id, Email: "z@x.io", ProductKey: "p", Period: "q", Amount: amount, PaidAt: at},
			eventOf[partner.RoyaltyRow](schemas.TypeRoyaltyRecorded)); err != nil {
			t.Fatal(err)
		}
	}
	mustCert := func(id, artifact string, amount int64, at time.Time) {
		if _, _, err := st.RecordCertPayout(ctx, partner.CertPayoutRow{ID: id, EventID: id, Email: "z@x.io", ArtifactVersionID: artifact, Amount: amount, CertifiedAt: at},
			eventOf[partner.CertPayoutRow](schemas.TypeCertPayoutRecorded)); err != nil {
			t.Fatal(err)
		}
	}
	mustRoyalty("r1", 100, t0)
	mustRoyalty("r2", 250, t0.Add(time.Hour))
	if _, _, err := st.RecordPodium(ctx, []partner.PrizeRow{{ID: "p1", TournamentID: "t", Place: 1, Email: "z@x.io", Amount: 1000, FinalizedAt: t0}},
		eventOf[partner.PrizeRow](schemas.TypePrizeRecorded)); err != nil {
		t.Fatal(err)
	}
	mustCert("c1", "a1", 7, t0)
	mustCert("c2", "a1", 8, t0.Add(2*time.Hour))
	mustCert("c3", "a2", 9, t0.Add(time.Hour))
	e, err = st.Earnings(ctx, "z@x.io")
	if err != nil {
		t.Fatal(err)
	}
	if e.Rights.Amount != 350 || e.Rights.Count != 2 || !e.Rights.Last.Equal(t0.Add(time.Hour)) ||
		e.Chess.Amount != 1000 || e.Chess.Count != 1 || e.Cert.Amount != 24 || e.Cert.Count != 3 || !e.Cert.Last.Equal(t0.Add(2*time.Hour)) {
		b, _ := json.Marshal(e)
		t.Fatalf("earnings %s", b)
	}
	cs, err := st.CertStats(ctx, "z@x.io")
	if err != nil || cs.Artifacts != 2 || cs.Payouts != 3 {
		t.Fatalf("cert stats %+v %v", cs, err)
	}
	rows, total, err := st.CertPayouts(ctx, "z@x.io", schemas.Position{}, 2)
	if err != nil || total != 3 || len(rows) != 2 || rows[0].ID != "c3" {
		t.Fatalf("payouts %+v %d %v", rows, total, err)
	}
}

// TestRoyaltiesListedInReceiptOrder: records received within one second are
// listed newest first by the time they were received, across pages, even
// when their ids sort the other way.
func TestRoyaltiesListedInReceiptOrder(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	st := partner.NewStore(pool)
	now := time.Now().UTC().Truncate(time.Microsecond)
	var sent []string
	for i := 9; i >= 0; i-- { // ids descending while received ascending
		id := fmt.Sprintf("r%d", i)
		r := partner.RoyaltyRow{ID: id, EventID: "e" + id, Email: "o@example.com", ProductKey: "p", Period: "2030-01", Amount: 1, PaidAt: now}
		if _, _, err := st.RecordRoyalty(ctx, r, eventOf[partner.RoyaltyRow](schemas.TypeRoyaltyRecorded)); err != nil {
			t.Fatal(err)
		}
		sent = append(sent, id)
	}
	var listed []string
	var before schemas.Position
	for page := 0; page < 10; page++ {
		rows, _, err := st.Royalties(ctx, "o@example.com", before, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			listed = append(listed, r.ID)
		}
		if len(rows) < 3 {
			break
		}
		last := rows[len(rows)-1]
		before = schemas.Position{At: last.RecordedAt, ID: last.ID}
	}
	slices.Reverse(sent)
	if !slices.Equal(listed, sent) {
		t.Fatalf("listed %v, want the newest received first: %v", listed, sent)
	}
}
