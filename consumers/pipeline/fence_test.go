package pipeline_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/topics"
)

// produceOnKey publishes commands with ids prefix1.. prefixN and the given
// amounts on key, and returns their partition.
func produceOnKey(t *testing.T, cl *kgo.Client, key, prefix string, amounts ...int64) int32 {
	t.Helper()
	var recs []*kgo.Record
	for i, a := range amounts {
		c := command(t, fmt.Sprintf("%s%d", prefix, i+1), a)
		c.Env.Key = key
		rec, err := topics.Record(topics.FiatCommands, c.Env)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	res := cl.ProduceSync(context.Background(), recs...)
	if err := res.FirstErr(); err != nil {
		t.Fatal(err)
	}
	return res[0].Record.Partition
}

// stayTotal checks that the total stays want for a while: nothing is
// applied twice late.
func stayTotal(t *testing.T, pool *pgxpool.Pool, want int64) {
	t.Helper()
	waitTotal(t, pool, want)
	time.Sleep(500 * time.Millisecond)
	if got := total(t, pool); got != want {
		t.Fatalf("total %d, want %d", got, want)
	}
}

// TestMissingKafkaOffsetResumesAtStoredPosition: a group whose Kafka offset
// is missing (franz-go hands -2, the reset offset) but whose database
// stored a position resumes there, not at the log start: the commands
// before it are not applied again.
func TestMissingKafkaOffsetResumesAtStoredPosition(t *testing.T) {
	pool, brokers := setup(t)
	ctx := context.Background()
	cl, err := topics.NewClient(brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	part := produceOnKey(t, cl, "wallet-1", "c-", 1, 2, 3, 4, 5, 10, 20, 30, 40, 50)
	// The database applied the first five (as a restore or a group whose
	// Kafka offsets expired would leave it); the group has no Kafka offset.
	if _, err := pool.Exec(ctx, `UPDATE test_counter SET total = 15`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO consumer_positions (group_name, topic, partition, next_offset)
		VALUES ('test-group', $1, $2, 5)`, topics.FiatCommands, part); err != nil {
		t.Fatal(err)
	}
	stop, _ := runGroup(t, pool, brokers, false)
	defer func() { _ = stop() }()
	waitTotal(t, pool, 165)
	produceOnKey(t, cl, "wallet-1", "after-", 1000)
	stayTotal(t, pool, 1165)
}

// TestFenceSeeksBackOverALossyPromotion: under a running runner the
// database loses its last commits — as a promotion of a replica that had
// not received them would (the stored position lowered with the state it
// covered, or the group's rows gone altogether). The runner's next batch
// must not jump over the lost range: its transaction finds the stored
// position below the batch, rolls back, seeks there, and the lost commands
// are applied again exactly once before the new ones.
func TestFenceSeeksBackOverALossyPromotion(t *testing.T) {
	tests := []struct {
		name string
		lose string // what the promoted database lost
	}{
		{"position lowered", `UPDATE test_counter SET total = 3;
			DELETE FROM processed_commands WHERE command_id IN ('early-3', 'early-4', 'early-5');
			UPDATE consumer_positions SET next_offset = 2 WHERE group_name = 'test-group'`},
		{"position lost", `UPDATE test_counter SET total = 0;
			DELETE FROM processed_commands; DELETE FROM consumer_positions`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pool, brokers := setup(t)
			ctx := context.Background()
			cl, err := topics.NewClient(brokers)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			stop, _ := runGroup(t, pool, brokers, false)
			defer func() { _ = stop() }()
			produceCommands(t, cl, "early-", 1, 2, 3, 4, 5)
			waitTotal(t, pool, 15)
			waitPosition(t, pool, 5)
			if _, err := pool.Exec(ctx, tt.lose); err != nil {
				t.Fatal(err)
			}
			produceCommands(t, cl, "late-", 10, 20, 30, 40, 50)
			waitTotal(t, pool, 165)
			produceCommands(t, cl, "after-", 1000)
			stayTotal(t, pool, 1165)
			var n int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM processed_commands`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 11 {
				t.Fatalf("%d commands recorded, want 11", n)
			}
			waitPosition(t, pool, 11)
		})
	}
}

// waitPosition waits until the test group's only stored position is next.
func waitPosition(t *testing.T, pool *pgxpool.Pool, next int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, got := storedPosition(t, pool); got != next; _, got = storedPosition(t, pool) {
		if time.Now().After(deadline) {
			t.Fatalf("stored position %d, want %d", got, next)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// demotedOnce is counterHandler whose first batch after arm fails as a
// demoted primary answers (25006), after lose ran: the promoted server
// the runner follows lost what lose removes.
type demotedOnce struct {
	counterHandler
	armed atomic.Bool
	lose  func(ctx context.Context) error
}

func (h *demotedOnce) Apply(ctx context.Context, tx pgx.Tx, cmds []pipeline.Command) ([]pipeline.Outcome, error) {
	if h.armed.Swap(false) {
		if err := h.lose(ctx); err != nil {
			return nil, err
		}
		if _, err := tx.Exec(ctx, `SET TRANSACTION READ ONLY`); err != nil {
			return nil, err
		}
		_, err := tx.Exec(ctx, `UPDATE test_counter SET total = total + 1`)
		return nil, err
	}
	return h.counterHandler.Apply(ctx, tx, cmds)
}

// TestRevalidatesPositionsAfterFollowingANewPrimary: a runner that
// followed a new primary (a batch refused as read-only, then retried)
// checks every partition it holds against the new primary's positions: one
// that receives no more records, whose last command the promotion lost,
// is sought back and that command applied again — not only when its next
// record happens to arrive.
func TestRevalidatesPositionsAfterFollowingANewPrimary(t *testing.T) {
	pool, brokers := setup(t)
	ctx := context.Background()
	var partB int32
	h := &demotedOnce{lose: func(ctx context.Context) error {
		_, err := pool.Exec(ctx, `UPDATE test_counter SET total = total - 20`)
		if err == nil {
			_, err = pool.Exec(ctx, `DELETE FROM processed_commands WHERE command_id = 'b-2'`)
		}
		if err == nil {
			_, err = pool.Exec(ctx, `UPDATE consumer_positions SET next_offset = 1 WHERE group_name = 'test-group' AND partition = $1`, partB)
		}
		return err
	}}
	r := newRunnerOf(t, h, pool, brokers, nil)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(runCtx) }()
	defer func() { stop(); <-done }()

	// Two partitions, chosen: A takes the failing batch, B stays idle.
	manual, err := topics.NewClient(brokers, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer manual.Close()
	const partA = 0
	partB = 1
	produceOn := func(part int32, id string, amount int64) {
		t.Helper()
		rec, err := topics.Record(topics.FiatCommands, command(t, id, amount).Env)
		if err != nil {
			t.Fatal(err)
		}
		rec.Partition = part
		if err := manual.ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produceOn(partA, "a-1", 1)
	produceOn(partB, "b-1", 10)
	produceOn(partB, "b-2", 20)
	waitTotal(t, pool, 31)
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM consumer_positions WHERE group_name = 'test-group'
			AND ((partition = $1 AND next_offset = 1) OR (partition = $2 AND next_offset = 2))`, partA, partB).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("positions not stored")
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.armed.Store(true)
	produceOn(partA, "a-2", 100)
	stayTotal(t, pool, 131)
}

// TestPartitionWithoutStoredPositionStartsOver: the database is restored
// to before the group applied anything of a partition (no stored position)
// while the group's Kafka offset is past those records: the partition
// starts over from its first record instead of skipping them at the Kafka
// offset for good.
func TestPartitionWithoutStoredPositionStartsOver(t *testing.T) {
	pool, brokers := setup(t)
	ctx := context.Background()
	cl, err := topics.NewClient(brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produceOnKey(t, cl, "wallet-1", "c-", 1, 2, 3, 4, 5)
	stop, _ := runGroup(t, pool, brokers, false)
	waitTotal(t, pool, 15)
	if err := stop(); err != nil { // commits the group's Kafka offsets
		t.Fatal(err)
	}
	// The restore: nothing of it applied, no position stored.
	if _, err := pool.Exec(ctx, `UPDATE test_counter SET total = 0; DELETE FROM processed_commands; DELETE FROM consumer_positions`); err != nil {
		t.Fatal(err)
	}
	stop, _ = runGroup(t, pool, brokers, false)
	defer func() { _ = stop() }()
	waitTotal(t, pool, 15)
	produceOnKey(t, cl, "wallet-1", "after-", 100)
	stayTotal(t, pool, 115)
}
