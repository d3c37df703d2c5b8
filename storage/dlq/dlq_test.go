package dlq_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/dlq"
	"github.com/fintech/platform/storage/migrations"
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
	tick := 0 // each audit row a millisecond after the last: History is in time order
	audit := func(action string, offset int64) dlq.Audit {
		tick++
		return dlq.Audit{ID: schemas.NewID(), RecordID: dec(offset).RecordID, Actor: "admin:u1", Action: action,
			CreatedAt: now.Add(time.Duration(tick) * time.Millisecond)}
	}
	published := 0
	publish := func(context.Context) error { published++; return nil }
	got, err := s.MarkReplayed(ctx, dec(1), audit("dlq.replay", 1), publish)
	if err != nil || got.State != dlq.StateReplayed || got.Replays != 1 || published != 1 {
		t.Fatalf("replay: %+v, %v (published %d)", got, err, published)
	}
	// A record is replayed once: the second is refused before publishing.
	if _, err := s.MarkReplayed(ctx, dec(1), audit("dlq.replay", 1), publish); !errors.Is(err, dlq.ErrInvalidState) || published != 1 {
		t.Fatalf("second replay: %v (published %d), want ErrInvalidState and no publish", err, published)
	}
	// A publish that fails records nothing.
	if _, err := s.MarkReplayed(ctx, dec(4), audit("dlq.replay", 4), func(context.Context) error { return errors.New("broker down") }); err == nil {
		t.Fatal("a failed publish was recorded")
	}
	if d, _ := s.Decisions(ctx, []string{dec(4).RecordID}); len(d) != 0 {
		t.Fatalf("a failed publish left a decision: %+v", d)
	}
	if _, err := s.MarkDiscarded(ctx, dec(1), audit("dlq.discard", 1)); !errors.Is(err, dlq.ErrInvalidState) {
		t.Fatalf("discard of a replayed record: %v, want ErrInvalidState", err)
	}
	if got, err := s.MarkDiscarded(ctx, dec(2), audit("dlq.discard", 2)); err != nil || got.State != dlq.StateDiscarded || got.Replays != 0 {
		t.Fatalf("discard: %+v, %v", got, err)
	}
	if got, err := s.MarkReplayed(ctx, dec(2), audit("dlq.replay", 2), publish); err != nil || got.State != dlq.StateReplayed || got.Replays != 1 {
		t.Fatalf("replay of a discarded record: %+v, %v", got, err)
	}
	if _, err := s.MarkDiscarded(ctx, dec(3), audit("dlq.discard", 3)); err != nil {
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
	var audited, inFiat int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM dlq_audit), (SELECT count(*) FROM fiat_audit)`).Scan(&audited, &inFiat); err != nil ||
		audited != 4 || inFiat != 0 {
		t.Fatalf("dlq_audit rows %d, fiat_audit rows %d (%v), want 4 and 0: every decision that took effect, in the dead letters' own log", audited, inFiat, err)
	}
	hist, err := s.History(ctx, dec(2).RecordID)
	if err != nil || len(hist) != 2 || hist[0].Action != dlq.ActionDiscard || hist[1].Action != dlq.ActionReplay || hist[1].Actor != "admin:u1" {
		t.Fatalf("history of %s: %+v, %v", dec(2).RecordID, hist, err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM dlq_audit`); err == nil {
		t.Fatal("dlq_audit is not append-only")
	}
	replayed, err := s.ReplayedByCommand(ctx, []string{"cmd", "other"})
	if err != nil || len(replayed) != 1 || len(replayed["cmd"]) != 2 || replayed["cmd"][0].RecordID != dec(1).RecordID || replayed["cmd"][1].RecordID != dec(2).RecordID {
		t.Fatalf("replayed by command: %+v, %v", replayed, err)
	}
}

// TestAuditMoved: the dlq decisions audited in fiat_audit before 0230 are
// moved to dlq_audit by the migration (none lost, none left behind, fiat's
// own rows untouched), and moved back by its down step.
func TestAuditMoved(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS, goose.WithAllowOutofOrder(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.ApplyVersion(ctx, 230, false); err != nil {
		t.Fatalf("down 0230: %v", err)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	if _, err := pool.Exec(ctx, `INSERT INTO fiat_audit (id, actor, action, subject, amount, currency, detail, created_at) VALUES
		('a1', 'admin:u1', 'dlq.replay', 'fiat.commands.dlq:0:1', 0, '', 'command c1 published again', $1),
		('a2', 'cli:ops', 'dlq.discard', 'fiat.commands.dlq:0:2', 0, '', 'command c2 discarded', $1),
		('a3', 'u1', 'transfer', 'tx1', 100, 'KZT', 'to w2', $1)`, now); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ApplyVersion(ctx, 230, true); err != nil {
		t.Fatalf("up 0230: %v", err)
	}
	hist, err := dlq.NewStore(pool).History(ctx, "fiat.commands.dlq:0:1")
	if err != nil || len(hist) != 1 || hist[0].ID != "a1" || hist[0].Actor != "admin:u1" || hist[0].Action != dlq.ActionReplay ||
		hist[0].Detail != "command c1 published again" || !hist[0].CreatedAt.Equal(now) {
		t.Fatalf("moved history: %+v, %v", hist, err)
	}
	var moved int
	var left []string
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM dlq_audit), (SELECT array_agg(id ORDER BY id) FROM fiat_audit)`).Scan(&moved, &left); err != nil ||
		moved != 2 || len(left) != 1 || left[0] != "a3" {
		t.Fatalf("dlq_audit %d rows, fiat_audit %v (%v): want 2 moved, fiat's own a3 left", moved, left, err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM fiat_audit`); err == nil {
		t.Fatal("fiat_audit is no longer append-only after the move")
	}
	if _, err := p.ApplyVersion(ctx, 230, false); err != nil {
		t.Fatalf("down 0230 again: %v", err)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM fiat_audit WHERE action LIKE 'dlq.%'`).Scan(&moved); err != nil || moved != 2 {
		t.Fatalf("down step: %d dlq rows back in fiat_audit (%v), want 2", moved, err)
	}
}
