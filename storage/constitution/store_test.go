package constitution_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/constitution"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics/names"
)

func event(t *testing.T, user string) pipeline.OutboxRow {
	t.Helper()
	env, err := schemas.New(schemas.TypeArtifactCreated, user, user, schemas.ArtifactCreated{UserID: user}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	row, err := pipeline.EventRow(names.EventsConstitution, env)
	if err != nil {
		t.Fatal(err)
	}
	return row
}

// TestSimilarMatchesBruteForce checks the SQL nearest-neighbour query
// against a brute-force reference on random catalogs. Sliders are drawn from
// a few values so that equal distances (ties, broken by id) are common.
func TestSimilarMatchesBruteForce(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	st := constitution.NewStore(pool)
	r := rand.New(rand.NewPCG(7, 11))
	now := time.Now().UTC().Truncate(time.Second)
	var recs []constitution.Record
	for i := range 120 {
		var v [8]int
		for j := range v {
			if i%2 == 0 {
				v[j] = r.IntN(101)
			} else {
				v[j] = []int{0, 50, 100}[r.IntN(3)]
			}
		}
		rec := constitution.Record{ID: schemas.NewID(), UserID: "u", Title: "t", Sliders: schemas.SlidersFrom(v),
			Regime: "hybrid-regime", Tags: []string{}, CreatedAt: now}
		if err := st.CreateArtifact(ctx, rec, event(t, "u")); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	d2 := func(a, b schemas.Sliders) int {
		x, y := a.Values(), b.Values()
		s := 0
		for i := range x {
			s += (x[i] - y[i]) * (x[i] - y[i])
		}
		return s
	}
	for _, ref := range recs[:40] {
		var want []constitution.Record
		for _, o := range recs {
			if o.ID != ref.ID {
				want = append(want, o)
			}
		}
		sort.Slice(want, func(i, j int) bool {
			di, dj := d2(ref.Sliders, want[i].Sliders), d2(ref.Sliders, want[j].Sliders)
			if di != dj {
				return di < dj
			}
			return want[i].ID < want[j].ID
		})
		want = want[:5]
		got, err := st.Similar(ctx, ref.ID, 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 5 {
			t.Fatalf("similar of %s: %d results", ref.ID, len(got))
		}
		for i := range want {
			if got[i].ID != want[i].ID {
				t.Fatalf("similar of %s, #%d: got %s (d²=%d), want %s (d²=%d)", ref.ID, i, got[i].ID,
					d2(ref.Sliders, got[i].Sliders), want[i].ID, d2(ref.Sliders, want[i].Sliders))
			}
			if wd := math.Sqrt(float64(d2(ref.Sliders, want[i].Sliders))); math.Abs(got[i].Distance-wd) > 1e-9 {
				t.Fatalf("distance %v, want %v", got[i].Distance, wd)
			}
		}
	}
	if _, err := st.Similar(ctx, "nope", 5); !errors.Is(err, postgres.ErrNotFound) {
		t.Fatalf("similar of an unknown id: %v", err)
	}
}

func TestSimilarSmallCatalog(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	st := constitution.NewStore(pool)
	rec := constitution.Record{ID: schemas.NewID(), UserID: "u", Title: "only", Regime: "x", CreatedAt: time.Now()}
	if err := st.CreateArtifact(ctx, rec, event(t, "u")); err != nil {
		t.Fatal(err)
	}
	got, err := st.Similar(ctx, rec.ID, 5)
	if err != nil || len(got) != 0 {
		t.Fatalf("similar in a catalog of one: %v %v", got, err)
	}
}

// TestTakeAIRequestConcurrent counts exactly under concurrency: of 30
// concurrent requests with a limit of 7, exactly 7 are allowed.
func TestTakeAIRequestConcurrent(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	st := constitution.NewStore(pool)
	now := time.Date(2026, 3, 31, 23, 59, 0, 0, time.UTC)
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, ok, err := st.TakeAIRequest(ctx, "alice", now, 7)
			if err != nil {
				t.Error(err)
				return
			}
			if ok {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if allowed != 7 {
		t.Fatalf("allowed %d of 30 with a limit of 7", allowed)
	}
	if used, _ := st.AIUsage(ctx, "alice", now); used != 7 {
		t.Fatalf("usage %d, want 7", used)
	}
	// A new calendar month starts from zero; other users are separate.
	if used, ok, err := st.TakeAIRequest(ctx, "alice", now.Add(2*time.Minute), 7); err != nil || !ok || used != 1 {
		t.Fatalf("next month: used %d ok %v err %v", used, ok, err)
	}
	if used, ok, err := st.TakeAIRequest(ctx, "bob", now, 7); err != nil || !ok || used != 1 {
		t.Fatalf("bob: used %d ok %v err %v", used, ok, err)
	}
	if _, ok, err := st.TakeAIRequest(ctx, "carol", now, 0); err != nil || ok {
		t.Fatalf("limit 0 allowed a request: ok %v err %v", ok, err)
	}
}

func TestVotesAndComments(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	st := constitution.NewStore(pool)
	now := time.Now().UTC()
	rec := constitution.Record{ID: schemas.NewID(), UserID: "u", Title: "a", Regime: "x", CreatedAt: now}
	if err := st.CreateArtifact(ctx, rec, event(t, "u")); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false} {
		created, err := st.Vote(ctx, rec.ID, "alice", now)
		if err != nil || created != want {
			t.Fatalf("vote %d: created %v err %v", i, created, err)
		}
	}
	if _, err := st.Vote(ctx, "missing", "alice", now); !errors.Is(err, postgres.ErrNotFound) {
		t.Fatalf("vote on a missing artifact: %v", err)
	}
	votes, voted, _, err := st.Social(ctx, rec.ID, "alice", schemas.Position{}, 0)
	if err != nil || votes != 1 || !voted {
		t.Fatalf("social: %d %v %v", votes, voted, err)
	}
	for range 2 {
		if err := st.Unvote(ctx, rec.ID, "alice"); err != nil {
			t.Fatal(err)
		}
	}
	if votes, voted, _, _ := st.Social(ctx, rec.ID, "alice", schemas.Position{}, 0); votes != 0 || voted {
		t.Fatalf("after unvote: %d %v", votes, voted)
	}
	for i, text := range []string{"first", "second"} {
		c := constitution.Comment{ID: schemas.NewID(), ArtifactID: rec.ID, UserID: "bob", Text: text, CreatedAt: now.Add(time.Duration(i) * time.Millisecond)}
		if err := st.AddComment(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.AddComment(ctx, constitution.Comment{ID: schemas.NewID(), ArtifactID: "missing", UserID: "bob", Text: "x", CreatedAt: now}); !errors.Is(err, postgres.ErrNotFound) {
		t.Fatalf("comment on a missing artifact: %v", err)
	}
	_, _, comments, err := st.Social(ctx, rec.ID, "", schemas.Position{}, 10)
	if err != nil || len(comments) != 2 || comments[0].Text != "first" || comments[1].Text != "second" {
		t.Fatalf("comments: %+v %v", comments, err)
	}
	a, err := st.Artifact(ctx, rec.ID)
	if err != nil || a.Comments != 2 || a.Votes != 0 {
		t.Fatalf("artifact counts: %+v %v", a, err)
	}
}

// BenchmarkSimilar measures `similar` on a catalog of 10,000 artifacts
// (a sequential scan ordered by the distance expression, no index).
func BenchmarkSimilar(b *testing.B) {
	ctx := context.Background()
	pool, _ := pgtest.NewDB(b)
	_, err := pool.Exec(ctx, `INSERT INTO planet_artifacts (id, user_id, title, floor, rule_of_law, rotation, transparency,
 multi_status, skin_in_game, polycentricity, positive_sum, regime, metrics, tags, created_at)
SELECT lpad(i::text, 27, '0'), 'u', 't', (random()*100)::int, (random()*100)::int, (random()*100)::int, (random()*100)::int,
 (random()*100)::int, (random()*100)::int, (random()*100)::int, (random()*100)::int, 'hybrid-regime', '{}', '{}', now()
FROM generate_series(1, 10000) i`)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE planet_artifacts`); err != nil {
		b.Fatal(err)
	}
	st := constitution.NewStore(pool)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		id := fmt.Sprintf("%027d", i%10000+1)
		got, err := st.Similar(ctx, id, 5)
		if err != nil || len(got) != 5 {
			b.Fatalf("similar: %v %d", err, len(got))
		}
	}
}
