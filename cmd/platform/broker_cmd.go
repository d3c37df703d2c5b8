package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/fintech/platform/topics/broker"
)

// cmdBroker runs the embedded Kafka-protocol broker as a process of its own,
// for a split deployment on one machine (deploy/local/cluster.sh): the
// gateways, consumers and relay reach it through KAFKA_BROKERS. Its data
// lives under DATA_DIR/kafka on KAFKA_EMBEDDED_PORT. It is one broker: no
// replication, so it is the one part of such a deployment a crash of its
// host can stop (never lose: acks=all records are fsynced).
func cmdBroker(ctx context.Context, cfg Config, args []string) error {
	if _, err := parseFlags("broker", args, nil); err != nil {
		return err
	}
	if len(cfg.KafkaBrokers) != 0 {
		return usageError{"broker: KAFKA_BROKERS is set: this process is the broker, unset it"}
	}
	log := newLogger(cfg.LogLevel)
	limitEmbedded(os.Getenv)
	reg := prometheus.NewRegistry()
	fsyncs := newFsyncHistogram()
	e, err := broker.Start(cfg.DataDir, cfg.KafkaPort, broker.WithLogger(log.With("component", "embedded-kafka")),
		broker.WithFsyncObserver(func(d time.Duration) { fsyncs.Observe(d.Seconds()) }))
	if err != nil {
		return fmt.Errorf("KAFKA_EMBEDDED_PORT: %w", err)
	}
	defer e.Close()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), fsyncs,
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "platform_broker_fsyncs_total", Help: "fsync calls of the embedded broker's group commit.",
		}, func() float64 { return float64(e.Fsyncs()) }))
	registerDataDirMetrics(reg, cfg.DataDir)
	// The broker serves its series (BrokerFsyncSlow, DiskFilling) on
	// METRICS_ADDR; a listener that cannot start is logged, not fatal: the
	// broker matters more than its metrics.
	if stop, err := serveMetrics(cfg.MetricsAddr, reg, log); err != nil {
		log.Warn("broker metrics not served", "err", err)
	} else {
		defer stop()
	}
	addrs := strings.Join(e.Addrs(), ",")
	log.Info("embedded kafka broker started", slog.String("addr", addrs), slog.String("dataDir", cfg.DataDir))
	fmt.Fprintf(os.Stderr, "embedded Kafka broker listening on %s\n", addrs)
	<-ctx.Done()
	return nil
}
