package pipeline_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/commandbus"
)

const (
	duplicateAmount = 777 // fails with a unique violation (23505) every time
	slowAmount      = 888 // fails on its statement timeout (57014) every time
)

// poisonous is counterHandler whose commands of duplicateAmount and
// slowAmount fail deterministically with SQLSTATEs once classed transient.
type poisonous struct{ counterHandler }

func (h poisonous) Apply(ctx context.Context, tx pgx.Tx, cmds []pipeline.Command) ([]pipeline.Outcome, error) {
	for _, c := range cmds {
		d, err := schemas.DataAs[addData](c.Env)
		if err != nil {
			return nil, err
		}
		switch d.Amount {
		case duplicateAmount:
			if _, err := tx.Exec(ctx, `INSERT INTO test_unique VALUES (1)`); err != nil {
				return nil, err
			}
		case slowAmount:
			if _, err := tx.Exec(ctx, `SET LOCAL statement_timeout = '20ms'`); err != nil {
				return nil, err
			}
			if _, err := tx.Exec(ctx, `SELECT pg_sleep(1)`); err != nil {
				return nil, err
			}
		}
	}
	return h.counterHandler.Apply(ctx, tx, cmds)
}

// TestDeterministicUniqueViolationAndTimeoutAreParked: a command failing
// every time with a unique violation (23505) or its statement timeout
// (57014) — both transient by class — is parked on the DLQ after its tries
// with a 500 reply, while the commands around it on its partition are
// applied: the partition is not wedged.
func TestDeterministicUniqueViolationAndTimeoutAreParked(t *testing.T) {
	pool, brokers := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := pool.Exec(ctx, `CREATE TABLE test_unique (id int PRIMARY KEY); INSERT INTO test_unique VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	bus, err := commandbus.New(ctx, brokers, 30*time.Second, false, log)
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	r := newRunnerOf(t, poisonous{}, pool, brokers, nil)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(runCtx) }()
	defer func() { stop(); <-done }()

	cl, err := topics.NewClient(brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// One batch on one partition: the poison in the middle of it.
	produceCommands(t, cl, "p-", 1, duplicateAmount, 2, slowAmount, 4)
	waitTotal(t, pool, 7)
	rep, err := bus.Send(ctx, command(t, "q-1", slowAmount))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != 500 {
		t.Fatalf("the slow command answered %d %s, want 500", rep.Status, rep.Body)
	}
	dlq, err := topics.NewClient(brokers, kgoConsume(topics.DLQ(topics.FiatCommands))...)
	if err != nil {
		t.Fatal(err)
	}
	defer dlq.Close()
	var parked []string
	for len(parked) < 3 && ctx.Err() == nil {
		dlq.PollFetches(ctx).EachRecord(func(r *kgo.Record) { parked = append(parked, topics.Header(r, "id")) })
	}
	slices.Sort(parked)
	if !slices.Equal(parked, []string{"p-2", "p-4", "q-1"}) {
		t.Fatalf("parked %v, want [p-2 p-4 q-1]", parked)
	}
	produceCommands(t, cl, "after-", 1000)
	waitTotal(t, pool, 1007)
}
