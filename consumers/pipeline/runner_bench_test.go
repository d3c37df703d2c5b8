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

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/commandbus"
)

// BenchmarkPipelineRoundTrip measures the command pipeline alone: Bus.Send
// through the embedded broker to a Runner applying a one-row update per
// command in batched transactions, and the reply back, at 64 concurrent
// senders: with each Overlap, for a handler applying statement by statement
// and a pipelined one.
func BenchmarkPipelineRoundTrip(b *testing.B) {
	for _, h := range []struct {
		name string
		h    pipeline.Handler
	}{{"apply", counterHandler{}}, {"pipelined", pipelinedCounter{}}} {
		for _, o := range []struct {
			name    string
			overlap pipeline.Overlap
		}{{"backlog", pipeline.OverlapBacklog}, {"always", pipeline.OverlapAlways}, {"never", pipeline.OverlapNever}} {
			b.Run(h.name+"/"+o.name, func(b *testing.B) { benchRoundTrip(b, h.h, o.overlap) })
		}
	}
}

func benchRoundTrip(b *testing.B, h pipeline.Handler, overlap pipeline.Overlap) {
	pool, brokers := setup(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	bus, err := commandbus.New(ctx, brokers, 30*time.Second, false, log)
	if err != nil {
		b.Fatal(err)
	}
	defer bus.Close()
	metrics := pipeline.NewMetrics(prometheus.NewRegistry())
	r, err := pipeline.NewRunner(pipeline.Config{Group: "bench-group", Topics: []string{topics.FiatCommands}, Brokers: brokers,
		Overlap: overlap}, pool, h, metrics, log)
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	defer func() { cancel(); <-done }()

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
				rep, err := bus.Send(ctx, commandbus.Command{Topic: topics.FiatCommands, Env: env})
				if err != nil || rep.Status != 200 {
					b.Errorf("send: %v %+v", err, rep)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "cmds/s")
	var batches, trips dto.Metric
	if err := metrics.BatchSize.WithLabelValues("bench-group").(prometheus.Histogram).Write(&batches); err != nil {
		b.Fatal(err)
	}
	if err := metrics.RoundTrips.WithLabelValues("bench-group").Write(&trips); err != nil {
		b.Fatal(err)
	}
	if n := float64(batches.GetHistogram().GetSampleCount()); n > 0 {
		b.ReportMetric(batches.GetHistogram().GetSampleSum()/n, "cmds/batch")
		b.ReportMetric(trips.GetCounter().GetValue()/n, "trips/batch")
	}
}

// BenchmarkBacklogDrain measures a runner catching up: b.N commands are on
// the topic before it starts (a restart after downtime, a burst), and the
// clock runs until all of them are applied. It compares
// the default Overlap (which overlaps a backlog) with OverlapNever.
func BenchmarkBacklogDrain(b *testing.B) {
	for _, o := range []struct {
		name    string
		overlap pipeline.Overlap
	}{{"backlog", pipeline.OverlapBacklog}, {"never", pipeline.OverlapNever}} {
		b.Run(o.name, func(b *testing.B) {
			pool, brokers := setup(b)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cl, err := topics.NewClient(brokers)
			if err != nil {
				b.Fatal(err)
			}
			defer cl.Close()
			for i := range b.N {
				env, _ := schemas.New(testType, "w-"+strconv.Itoa(i%64), "u", addData{Amount: 1}, time.Now())
				rec, _ := topics.Record(topics.FiatCommands, env)
				cl.Produce(ctx, rec, nil)
			}
			if err := cl.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			metrics := pipeline.NewMetrics(prometheus.NewRegistry())
			r, err := pipeline.NewRunner(pipeline.Config{Group: "bench-group", Topics: []string{topics.FiatCommands}, Brokers: brokers,
				Overlap: o.overlap}, pool, pipelinedCounter{}, metrics, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			done := make(chan struct{})
			go func() { defer close(done); _ = r.Run(ctx) }()
			for {
				var applied int64
				if err := pool.QueryRow(ctx, `SELECT total FROM test_counter`).Scan(&applied); err != nil {
					b.Fatal(err)
				}
				if applied == int64(b.N) {
					break
				}
				time.Sleep(2 * time.Millisecond)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "cmds/s")
			b.StopTimer()
			cancel()
			<-done
			var m dto.Metric
			if err := metrics.Overlapped.WithLabelValues("bench-group").Write(&m); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(m.GetCounter().GetValue(), "overlapped")
		})
	}
}
