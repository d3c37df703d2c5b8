// Package topics names every Kafka topic with its partition count, key and
// retention, and holds the franz-go client helpers shared by the gateway and
// the consumers.
package topics

import (
	"strings"
	"time"

	"github.com/fintech/platform/topics/names"
)

// The topic names; topics/names, a leaf storage may import, says what each
// carries and how it is keyed.
const (
	FiatCommands       = names.FiatCommands
	MaskCommands       = names.MaskCommands
	ReputationCommands = names.ReputationCommands
	TradeCommands      = names.TradeCommands
	LedgerAppend       = names.LedgerAppend
	GatewayReplies     = names.GatewayReplies

	FiatOutcomes  = names.FiatOutcomes
	MaskOutcomes  = names.MaskOutcomes
	TradeOutcomes = names.TradeOutcomes

	EventsIdentity     = names.EventsIdentity
	EventsFiat         = names.EventsFiat
	EventsMask         = names.EventsMask
	EventsLedger       = names.EventsLedger
	EventsReputation   = names.EventsReputation
	EventsGov          = names.EventsGov
	EventsCharity      = names.EventsCharity
	EventsTrade        = names.EventsTrade
	EventsPartner      = names.EventsPartner
	EventsBuild        = names.EventsBuild
	EventsConstitution = names.EventsConstitution

	AnalyticsWebhooks = names.AnalyticsWebhooks
)

// OutcomesOf names the outcome journal of a command topic; ok is false for
// a topic without one.
func OutcomesOf(commandTopic string) (journal string, ok bool) {
	switch commandTopic {
	case FiatCommands:
		return FiatOutcomes, true
	case MaskCommands:
		return MaskOutcomes, true
	case TradeCommands:
		return TradeOutcomes, true
	}
	return "", false
}

// Consumer group names. Renaming a group makes it start over from the
// retention horizon, re-consuming history: commands are deduplicated by id, but
// treat a rename as a migration.
const (
	GroupFiat       = "fiat-applier"
	GroupMask       = "mask-applier"
	GroupReputation = "reputation-applier"
	GroupLedger     = "ledger-appender"
	GroupSink       = "clickhouse-sink"
	GroupWebhooks   = "webhook-dispatcher"
	GroupTrade      = "trade-applier"
)

// Groups lists every consumer group the platform runs. Each is run by the
// module that declares it in cmd/platform and named in the README's
// `platform consume` list (TestModuleRegistration checks both).
func Groups() []string {
	return []string{GroupFiat, GroupMask, GroupReputation, GroupLedger, GroupSink, GroupWebhooks, GroupTrade}
}

// Spec describes one topic.
type Spec struct {
	Name       string
	Partitions int32
	// RetentionMs is retention.ms; -1 keeps records forever.
	RetentionMs int64
	// Volatile marks a topic whose records nobody needs after a host crash:
	// gateway.replies. A reply is produced after its command's result is
	// committed in Postgres and stored for replays, its producer does not
	// wait for the acknowledgement, and the gateway reads it the moment the
	// broker has it; a reply lost with the page cache only makes the waiting
	// request time out, and its retry gets the stored result. The embedded
	// broker acknowledges volatile records without an fsync.
	Volatile bool
	// Bundled marks a topic that every transfer writes to besides its own
	// event (the ledger append and the ledger entry, the score updates): a
	// consumer batch writes what it emits to it as one schemas.TypeEventBundle
	// record (a few, if large) keyed by the topic name, so they stay in one
	// partition, in order. Readers, the ledger appender's runner included,
	// expand the bundles (Expand); the gateway's own commands to such a topic
	// stay single records.
	Bundled bool
}

const week = 7 * 24 * 3600 * 1000

// EventTopics lists every events.* topic.
func EventTopics() []string {
	return []string{EventsIdentity, EventsFiat, EventsMask, EventsLedger, EventsReputation,
		EventsGov, EventsCharity, EventsTrade, EventsPartner, EventsConstitution, EventsBuild}
}

// All returns every topic the platform uses, including one DLQ per source
// topic, with the partition counts of architecture.md.
func All() []Spec {
	specs := []Spec{
		{Name: FiatCommands, Partitions: 12, RetentionMs: week},
		{Name: MaskCommands, Partitions: 12, RetentionMs: week},
		{Name: ReputationCommands, Partitions: 6, RetentionMs: week},
		{Name: TradeCommands, Partitions: 6, RetentionMs: week},
		{Name: LedgerAppend, Partitions: 1, RetentionMs: -1, Bundled: true},
		{Name: GatewayReplies, Partitions: 12, RetentionMs: 3600 * 1000, Volatile: true},
		{Name: AnalyticsWebhooks, Partitions: 6, RetentionMs: -1},
		// The journals have their command topic's partitions and retention.
		// On the embedded broker they are volatile: an entry is written before
		// its reply leaves but not fsynced (the fsync round cost the pipeline
		// 4-5x its throughput in BenchmarkPipelineRoundTrip), so a host crash
		// of the broker loses the entries of its last seconds; only a database
		// restored to before those commands then decides them again. A real
		// cluster replicates them (acks=all) before the reply.
		{Name: FiatOutcomes, Partitions: 12, RetentionMs: week, Volatile: true},
		{Name: MaskOutcomes, Partitions: 12, RetentionMs: week, Volatile: true},
		{Name: TradeOutcomes, Partitions: 6, RetentionMs: week, Volatile: true},
	}
	for _, t := range EventTopics() {
		specs = append(specs, Spec{Name: t, Partitions: 6, RetentionMs: -1,
			Bundled: t == EventsLedger || t == EventsReputation})
	}
	for _, s := range specs[:] {
		if s.Name == GatewayReplies {
			continue
		}
		specs = append(specs, Spec{Name: DLQ(s.Name), Partitions: 1, RetentionMs: -1})
	}
	return specs
}

// CommandRetention is the longest time a command topic keeps its records: a
// consumer that lost its offsets re-reads that far back, so applied-command
// ids must be remembered at least this long for exactly-once application.
func CommandRetention() time.Duration {
	var longest int64
	for _, s := range All() {
		if strings.HasSuffix(s.Name, ".commands") && s.RetentionMs > longest {
			longest = s.RetentionMs
		}
	}
	return time.Duration(longest) * time.Millisecond
}

// DLQ names the dead-letter topic of a source topic.
func DLQ(topic string) string { return topic + ".dlq" }
