package dlq_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/dlq"
	"github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/storage/postgres/pgtest"
)

// TestDecisions replays a record twice (counted), refuses to discard it,
// discards another and replays it after all, counts only the decisions at
// or after a partition's start, and audits every decision.
func TestDecisions(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	s := dlq.NewStore(pool)
	now := time.Now().UTC().Truncate(time.Microsecond)
	dec := func(offset int64) dlq.Decision {
		return dlq.Decision{RecordID: "fiat.commands.dlq:0:" + string(rune('0'+offset)), Topic: "fiat.commands.dlq",
			Offset: offset, CommandID: "cmd", Actor: "admin:u1", DecidedAt: now}
	}
	audit := func(action string) fiat.AuditRow {
		return fiat.AuditRow{ID: schemas.NewID(), Actor: "admin:u1", Action: action, CreatedAt: now}
	}
	published := 0
	publish := func(context.Context) error { published++; return nil }
	got, err := s.MarkReplayed(ctx, dec(1), audit("dlq.replay"), publish)
	if err != nil || got.State != dlq.StateReplayed || got.Replays != 1 || published != 1 {
		t.Fatalf("replay: %+v, %v (published %d)", got, err, published)
	}
	// A record is replayed once: the second is refused before publishing.
	if _, err := s.MarkReplayed(ctx, dec(1), audit("dlq.replay"), publish); !errors.Is(err, dlq.ErrInvalidState) || published != 1 {
		t.Fatalf("second replay: %v (published %d), want ErrInvalidState and no publish", err, published)
	}
	// A publish that fails records nothing.
	if _, err := s.MarkReplayed(ctx, dec(4), audit("dlq.replay"), func(context.Context) error { return errors.New("broker down") }); err == nil {
		t.Fatal("a failed publish was recorded")
	}
	if d, _ := s.Decisions(ctx, []string{dec(4).RecordID}); len(d) != 0 {
		t.Fatalf("a failed publish left a decision: %+v", d)
	}
	if _, err := s.MarkDiscarded(ctx, dec(1), audit("dlq.discard")); !errors.Is(err, dlq.ErrInvalidState) {
		t.Fatalf("discard of a replayed record: %v, want ErrInvalidState", err)
	}
	if got, err := s.MarkDiscarded(ctx, dec(2), audit("dlq.discard")); err != nil || got.State != dlq.StateDiscarded || got.Replays != 0 {
		t.Fatalf("discard: %+v, %v", got, err)
	}
	if got, err := s.MarkReplayed(ctx, dec(2), audit("dlq.replay"), publish); err != nil || got.State != dlq.StateReplayed || got.Replays != 1 {
		t.Fatalf("replay of a discarded record: %+v, %v", got, err)
	}
	if _, err := s.MarkDiscarded(ctx, dec(3), audit("dlq.discard")); err != nil {
		t.Fatal(err)
	}
	counts, err := s.DecidedCounts(ctx, []dlq.Start{{Topic: "fiat.commands.dlq", Partition: 0, Offset: 2}, {Topic: "mask.commands.dlq"}})
	if err != nil || counts["fiat.commands.dlq"] != 2 || len(counts) != 1 {
		t.Fatalf("decided counts from offset 2: %v, %v", counts, err)
	}
	decs, err := s.Decisions(ctx, []string{dec(1).RecordID, dec(3).RecordID, "fiat.commands.dlq:0:9"})
	if err != nil || len(decs) != 2 || decs[dec(3).RecordID].State != dlq.StateDiscarded || !decs[dec(1).RecordID].DecidedAt.Equal(now) {
		t.Fatalf("decisions: %+v, %v", decs, err)
	}
	var audited int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM fiat_audit WHERE action LIKE 'dlq.%'`).Scan(&audited); err != nil || audited != 4 {
		t.Fatalf("audit rows %d (%v), want 4: every decision that took effect, not the refused ones", audited, err)
	}
}
