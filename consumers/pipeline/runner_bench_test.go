package pipeline_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fintech/platform/gateway/commands"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// BenchmarkPipelineRoundTrip measures the command pipeline alone: Bus.Send
// through the embedded broker to a Runner applying a one-row update per
// command in batched transactions, and the reply back, at 64 concurrent
// senders.
func BenchmarkPipelineRoundTrip(b *testing.B) {
	pool, brokers := setup(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	bus, err := commands.NewBus(ctx, brokers, 30*time.Second, log)
	if err != nil {
		b.Fatal(err)
	}
	defer bus.Close()
	r := newRunner(b, pool, brokers, nil)
	go func() { _ = r.Run(ctx) }()

	senders := 64
	if s := os.Getenv("BENCH_SENDERS"); s != "" {
		senders, _ = strconv.Atoi(s)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for s := 0; s < senders; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				env, _ := schemas.New(testType, "w", "u", addData{Amount: 1}, time.Now())
				rep, err := bus.Send(ctx, commands.Command{Topic: topics.FiatCommands, Env: env})
				if err != nil || rep.Status != 200 {
					b.Errorf("send: %v %+v", err, rep)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "cmds/s")
}
