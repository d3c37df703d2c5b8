package reputation

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/storage/reputation"
	"github.com/fintech/platform/topics"
)

// TestTwoAppliersCreditANewUserOnce: two processes of the group credit a
// user who has no score row yet, at the same time (derived events arrive
// keyed by wallet and by campaign, so two partitions can name one user).
// The second waits for the first and adds to its score: the score is the
// sum of both weights and the count is two, with distinct seqs.
func TestTwoAppliersCreditANewUserOnce(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := pool.Exec(ctx, `INSERT INTO users (id, email, password_hash) VALUES ('new', 'new@x.test', 'x')`); err != nil {
		t.Fatal(err)
	}
	credit := func(weight int64, source string) []pipeline.Command {
		env, err := schemas.New(schemas.TypeReputationEvent, "new", "", schemas.ReputationEvent{UserID: "new",
			Kind: schemas.RepKindWalletActive, SourceModule: "fiat", Weight: weight, SourceID: source}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return []pipeline.Command{{Env: env, Topic: topics.ReputationCommands}}
	}
	first, second := NewApplier(time.Now), NewApplier(time.Now)

	tx1, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx1.Rollback(ctx) }()
	if out, err := first.Apply(ctx, tx1, credit(2, "a")); err != nil || out[0].Status != 201 {
		t.Fatalf("first apply: %v %+v", err, out)
	}
	done := make(chan error, 1)
	go func() {
		done <- pgx.BeginFunc(ctx, pool, func(tx2 pgx.Tx) error {
			out, err := second.Apply(ctx, tx2, credit(4, "b"))
			if err == nil && out[0].Status != 201 {
				t.Errorf("second apply: %+v", out[0])
			}
			return err
		})
	}()
	// The second waits on the first's uncommitted row, or has finished.
	waitBlocked(ctx, t, pool, done)
	if err := tx1.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("second apply: %v", err)
	}
	sc, found, err := reputation.NewStore(pool).ScoreOf(ctx, "new")
	if err != nil || !found {
		t.Fatalf("score: %v %v", found, err)
	}
	if sc.Score != 6 || sc.EventCount != 2 {
		t.Fatalf("score %d after %d events, want 6 after 2 (an update was lost)", sc.Score, sc.EventCount)
	}
	var seqs int
	if err := pool.QueryRow(ctx, `SELECT count(DISTINCT seq) FROM reputation_events WHERE user_id = 'new'`).Scan(&seqs); err != nil || seqs != 2 {
		t.Fatalf("%d distinct seqs (%v), want 2", seqs, err)
	}
}

// waitBlocked returns once a backend of the test's database waits for a
// lock, or done has an answer (which it puts back).
func waitBlocked(ctx context.Context, t *testing.T, pool *pgxpool.Pool, done chan error) {
	t.Helper()
	for {
		select {
		case err := <-done:
			done <- err
			return
		default:
		}
		var waiting bool
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks l JOIN pg_stat_activity a USING (pid)
			WHERE NOT l.granted AND a.datname = current_database())`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}
