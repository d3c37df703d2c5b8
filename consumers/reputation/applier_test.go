package reputation

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/storage/reputation"
	"github.com/fintech/platform/topics"
)

func TestApplyScoresRanksAndDedupe(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	for _, id := range []string{"u1", "u2"} {
		if _, err := pool.Exec(ctx, `INSERT INTO users (id, email, password_hash) VALUES ($1, $1 || '@x.test', 'x')`, id); err != nil {
			t.Fatal(err)
		}
	}
	mk := func(ev schemas.ReputationEvent) pipeline.Command {
		env, err := schemas.New(schemas.TypeReputationEvent, ev.UserID, "", ev, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return pipeline.Command{Env: env, Topic: topics.ReputationCommands}
	}
	a := NewApplier(time.Now)
	apply := func(cmds ...pipeline.Command) []pipeline.Outcome {
		t.Helper()
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out, err := a.Apply(ctx, tx, cmds)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		return out
	}
	out := apply(
		mk(schemas.ReputationEvent{UserID: "u1", Kind: schemas.RepKindWalletActive, SourceModule: "fiat", Weight: 1, SourceID: "tx1"}),
		mk(schemas.ReputationEvent{UserID: "u2", Kind: schemas.RepKindWalletActive, SourceModule: "fiat", Weight: 1, SourceID: "tx1"}),
		mk(schemas.ReputationEvent{UserID: "u1", Kind: "bonus", SourceModule: "test", Weight: 9}),
		mk(schemas.ReputationEvent{UserID: "u1", Kind: schemas.RepKindWalletActive, SourceModule: "fiat", Weight: 1, SourceID: "tx1"}),
		mk(schemas.ReputationEvent{UserID: "ghost", Kind: "x", Weight: 1}),
		mk(schemas.ReputationEvent{UserID: "u1", Kind: "x", Weight: 1001}),
		mk(schemas.ReputationEvent{UserID: "u2", Kind: schemas.RepKindMaskRiskFlag, SourceModule: "mask", Weight: -2, SourceID: "c1"}),
	)
	want := []struct {
		status   int
		score    int64
		rank     string
		promoted bool
	}{
		{201, 1, "seedling", false}, {201, 1, "seedling", false}, {201, 10, "sprout", true},
		{200, 1, "seedling", false}, {404, 0, "", false}, {400, 0, "", false}, {201, -1, "seedling", false},
	}
	for i, w := range want {
		o := out[i]
		if o.Status != w.status {
			t.Fatalf("event %d: %d %s, want %d", i, o.Status, o.Body, w.status)
		}
		if w.status >= 300 {
			continue
		}
		var r Result
		if err := json.Unmarshal(o.Body, &r); err != nil {
			t.Fatal(err)
		}
		if r.NewScore != w.score || r.NewRank != w.rank || r.Promoted != w.promoted {
			t.Fatalf("event %d: %+v", i, r)
		}
	}
	if len(out[2].Emit) != 2 || out[2].Emit[1].Env.Type != schemas.TypeRankPromoted || len(out[3].Emit) != 0 {
		t.Fatalf("emissions: %+v", out[2].Emit)
	}

	// A later batch: the re-sent emission is still applied once; a demotion
	// is not a promotion.
	out = apply(
		mk(schemas.ReputationEvent{UserID: "u2", Kind: schemas.RepKindMaskRiskFlag, SourceModule: "mask", Weight: -2, SourceID: "c1"}),
		mk(schemas.ReputationEvent{UserID: "u1", Kind: "penalty", SourceModule: "test", Weight: -5}),
	)
	if out[0].Status != 200 || out[1].Status != 201 {
		t.Fatalf("second batch: %d %d", out[0].Status, out[1].Status)
	}
	var r Result
	_ = json.Unmarshal(out[1].Body, &r)
	if r.NewScore != 5 || r.PreviousRank != "sprout" || r.NewRank != "seedling" || r.Promoted {
		t.Fatalf("demotion: %+v", r)
	}
	st := reputation.NewStore(pool)
	s1, _, _ := st.ScoreOf(ctx, "u1")
	s2, _, _ := st.ScoreOf(ctx, "u2")
	if s1.Score != 5 || s1.EventCount != 3 || s2.Score != -1 || s2.Rank != "seedling" {
		t.Fatalf("scores %+v %+v", s1, s2)
	}
	recent, err := st.Recent(ctx, "u1", 50)
	if err != nil || len(recent) != 3 || recent[0].Kind != "penalty" {
		t.Fatalf("recent %+v %v", recent, err)
	}
}

// TestReappliedEventMintsTheSameIDs: a reputation command applied again
// (after a restore, re-read from its topic) mints the event id and the
// score.updated and rank.promoted ids it minted the first time.
func TestReappliedEventMintsTheSameIDs(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `INSERT INTO users (id, email, password_hash) VALUES ('u1', 'u1@x.test', 'x')`); err != nil {
		t.Fatal(err)
	}
	env, err := schemas.New(schemas.TypeReputationEvent, "u1", "",
		schemas.ReputationEvent{UserID: "u1", Kind: "bonus", SourceModule: "test", Weight: 20}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	a := NewApplier(time.Now)
	ids := func() []string {
		t.Helper()
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }() // the restore: this application is lost
		out, err := a.Apply(ctx, tx, []pipeline.Command{{Env: env, Topic: topics.ReputationCommands}})
		if err != nil {
			t.Fatal(err)
		}
		var r Result
		if err := json.Unmarshal(out[0].Body, &r); err != nil {
			t.Fatal(err)
		}
		got := []string{r.EventID}
		for _, e := range out[0].Emit {
			got = append(got, e.Env.ID)
		}
		return got
	}
	first, again := ids(), ids()
	if len(first) != 3 || strings.Join(first, ",") != strings.Join(again, ",") {
		t.Fatalf("re-applied event minted %v, the first application %v: want the same event, score.updated and rank.promoted ids", again, first)
	}
}
