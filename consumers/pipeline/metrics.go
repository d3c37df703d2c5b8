package pipeline

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the consumer-side Prometheus series, shared by every runner of
// a process and labelled by group.
type Metrics struct {
	BatchSize *prometheus.HistogramVec
	ApplySecs *prometheus.HistogramVec
	Lag       *prometheus.GaugeVec
	Applied   *prometheus.CounterVec
	DLQ       *prometheus.CounterVec
	// RoundTrips counts the round trips batches make to Postgres (a
	// pipelined batch makes two); divided by the batch count it is the
	// bench's round trips per batch.
	RoundTrips *prometheus.CounterVec
	// Overlapped counts batches started while the same worker's batch
	// before them was still in flight (Config.Overlap).
	Overlapped *prometheus.CounterVec
	// Redone counts overlapped batches rolled back because the batch
	// before them did not commit first, and applied again after it.
	Redone *prometheus.CounterVec
	// Gathered is how long polls were held open for more records
	// (Config.Gather, gather.go).
	Gathered *prometheus.HistogramVec
}

// NewMetrics registers the series on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		BatchSize: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "platform_consumer_batch_size", Help: "Records per applied batch.",
			Buckets: []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000},
		}, []string{"group"}),
		ApplySecs: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "platform_consumer_apply_seconds", Help: "Time to apply and commit one batch.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}, []string{"group"}),
		Lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "platform_consumer_lag", Help: "Records behind the partition high watermark.",
		}, []string{"group", "topic", "partition"}),
		Applied: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "platform_consumer_records_total", Help: "Records handled, by result.",
		}, []string{"group", "result"}),
		DLQ: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "platform_consumer_dlq_total", Help: "Records parked on a dead-letter topic.",
		}, []string{"group", "topic"}),
		RoundTrips: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "platform_consumer_roundtrips_total", Help: "Round trips of applied batches to Postgres.",
		}, []string{"group"}),
		Overlapped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "platform_consumer_overlapped_total", Help: "Batches started while the batch before them was still in flight.",
		}, []string{"group"}),
		Redone: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "platform_consumer_redone_total", Help: "Overlapped batches rolled back because the batch before did not commit, and applied again.",
		}, []string{"group"}),
		Gathered: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "platform_consumer_gather_seconds", Help: "Time a poll was held open for more records while the runner was busy.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 12),
		}, []string{"group"}),
	}
	reg.MustRegister(m.BatchSize, m.ApplySecs, m.Lag, m.Applied, m.DLQ, m.RoundTrips, m.Overlapped, m.Redone, m.Gathered)
	return m
}
