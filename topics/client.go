package topics

import (
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/topics/netsource"
)

// ParseBrokers splits a comma-separated broker list.
func ParseBrokers(s string) []string {
	var out []string
	for _, b := range strings.Split(s, ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}

// NewClient builds a franz-go client with the platform's defaults: no linger
// (request/reply latency matters more than batch size; batches still form
// while requests are in flight), all-ISR acks with idempotence, and short
// fetch waits. extra options are appended and win.
func NewClient(brokers []string, extra ...kgo.Opt) (*kgo.Client, error) {
	opts := []kgo.Opt{
		kgo.SeedBrokers(brokers...),
		kgo.ProducerLinger(0),
		// Loopback and LAN links gain nothing from compression; it costs CPU
		// on both sides.
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.FetchMaxWait(250 * time.Millisecond),
		// Batches stay within Kafka's default message.max.bytes (1 MB):
		// larger ones are refused as MESSAGE_TOO_LARGE.
		kgo.ProducerBatchMaxBytes(1_000_000),
		kgo.MaxBufferedRecords(100_000),
	}
	if d := netsource.Dialer(); d != nil {
		// from this process's own address (the local cluster's link faults)
		opts = append(opts, kgo.Dialer(d.DialContext))
	}
	opts = append(opts, extra...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("new kafka client: %w", err)
	}
	return cl, nil
}
