package pipeline_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// sizeHandler applies like counterHandler and records the size of every
// batch it is given.
type sizeHandler struct {
	mu    sync.Mutex
	sizes []int
	total int
}

func (h *sizeHandler) Apply(ctx context.Context, tx pgx.Tx, cmds []pipeline.Command) ([]pipeline.Outcome, error) {
	out, err := counterHandler{}.Apply(ctx, tx, cmds)
	if err == nil {
		h.mu.Lock()
		h.sizes, h.total = append(h.sizes, len(cmds)), h.total+len(cmds)
		h.mu.Unlock()
	}
	return out, err
}

func (h *sizeHandler) read() ([]int, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int(nil), h.sizes...), h.total
}

// gatherEnv runs a runner with the given Gather window and returns its
// handler and a function that puts one command on the topic.
func gatherEnv(t *testing.T, ctx context.Context, window time.Duration) (*sizeHandler, func()) {
	t.Helper()
	pool, brokers := setup(t)
	h := &sizeHandler{}
	r, err := pipeline.NewRunner(pipeline.Config{Group: "test-group", Topics: []string{topics.FiatCommands}, Brokers: brokers,
		Gather: window}, pool, h, pipeline.NewMetrics(prometheus.NewRegistry()), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(rctx) }()
	t.Cleanup(func() { stop(); <-done })
	cl, err := topics.NewClient(brokers)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	send := func() {
		env, err := schemas.New(testType, "wallet-1", "user-1", addData{Amount: 1}, time.Now())
		if err != nil {
			t.Error(err)
			return
		}
		rec, err := topics.Record(topics.FiatCommands, env)
		if err != nil {
			t.Error(err)
			return
		}
		if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Error(err)
		}
	}
	return h, send
}

func waitApplied(ctx context.Context, t *testing.T, h *sizeHandler, want int) {
	t.Helper()
	for ctx.Err() == nil {
		if _, n := h.read(); n >= want {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	_, n := h.read()
	t.Fatalf("%d commands applied, want %d", n, want)
}

// TestGatherFillsABusyRunnersBatch: commands that arrive one after another,
// a few milliseconds apart, while the runner is busy (it has just applied
// one), go into one batch instead of one batch each: without the window,
// the poll answers with the first alone.
func TestGatherFillsABusyRunnersBatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// A window far above the spacing: the test is about the batching, not
	// about a loaded machine's scheduling.
	h, send := gatherEnv(t, ctx, 400*time.Millisecond)
	send()
	waitApplied(ctx, t, h, 1)
	const n = 5
	for range n {
		send()
		time.Sleep(10 * time.Millisecond)
	}
	waitApplied(ctx, t, h, 1+n)
	sizes, _ := h.read()
	if got := sizes[1:]; len(got) != 1 || got[0] != n {
		t.Fatalf("after the first command, batches of %v: want the %d commands sent 10 ms apart in one batch", got, n)
	}
}

// TestGatherEndsAtItsBound: while commands keep coming, faster than the
// window's quiet half, the poll is closed when the window ends: the first
// batch is applied while the stream still runs, not when it stops.
func TestGatherEndsAtItsBound(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	h, send := gatherEnv(t, ctx, 100*time.Millisecond)
	send()
	waitApplied(ctx, t, h, 1)
	const n = 300 // 5 ms apart: 1.5 s at least
	streamed := make(chan struct{})
	go func() {
		defer close(streamed)
		for range n {
			send()
			time.Sleep(5 * time.Millisecond)
		}
	}()
	for ctx.Err() == nil {
		sizes, _ := h.read()
		if len(sizes) >= 2 {
			break
		}
		select {
		case <-streamed:
			t.Fatalf("no batch applied while %d commands streamed in (batches %v): the window did not end at its bound", n, sizes)
		case <-time.After(2 * time.Millisecond):
		}
	}
	sizes, _ := h.read()
	if sizes[1] >= n || sizes[1] < 2 {
		t.Fatalf("the first batch of the stream held %d commands: want more than one and fewer than all %d", sizes[1], n)
	}
	<-streamed
	waitApplied(ctx, t, h, 1+n)
}

// TestGatherDoesNotHoldAnIdleRunner: the first command a runner sees after
// a quiet spell is applied at once, not held for the window (here far
// longer than the wait allowed for the answer).
func TestGatherDoesNotHoldAnIdleRunner(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const window = 20 * time.Second
	h, send := gatherEnv(t, ctx, window)
	// A held poll would wait at least the window's quiet half.
	sent := time.Now()
	send()
	waitApplied(ctx, t, h, 1)
	if took := time.Since(sent); took >= window/2 {
		t.Fatalf("the first command on an idle runner was applied after %s: it was held for the gather window", took)
	}
}
