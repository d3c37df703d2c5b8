// Package names names the platform's Kafka topics. It is a leaf: it
// imports nothing, so storage, which stores the payloads bound for a topic
// (an outbox row names its topic) and links no Kafka client, takes its
// topic names from here. Package topics gives the same names (its
// constants are these) with the partition counts, retention and the
// franz-go clients; everything above storage uses topics.
package names

// Command topics. Every command touching one wallet (or mask, or user) is keyed
// so it lands on one partition and is applied in order by one consumer.
const (
	FiatCommands       = "fiat.commands"       // key: source wallet id
	MaskCommands       = "mask.commands"       // key: mask id
	ReputationCommands = "reputation.commands" // key: user id
	TradeCommands      = "trade.commands"      // key: account id
	LedgerAppend       = "ledger.append"       // one partition: the chain order
	GatewayReplies     = "gateway.replies"     // key: gateway instance id
)

// Outcome journals: what an applier decided for each command of a command
// topic, on the partition number of the command (consumers/pipeline
// journal.go). They keep records as long as their command topic, so a
// database restored to any point the commands still cover re-applies them
// with the outcomes the clients were given.
const (
	FiatOutcomes  = "fiat.outcomes"
	MaskOutcomes  = "mask.outcomes"
	TradeOutcomes = "trade.outcomes"
)

// Event topics, one per module, keyed by subject id.
const (
	EventsIdentity   = "events.identity"
	EventsFiat       = "events.fiat"
	EventsMask       = "events.mask"
	EventsLedger     = "events.ledger"
	EventsReputation = "events.reputation"
	EventsGov        = "events.gov"
	EventsCharity    = "events.charity"
	EventsTrade      = "events.trade"
	EventsPartner    = "events.partner"
	EventsBuild      = "events.build"
	// EventsConstitution carries the constitution and planet events, keyed by user id.
	EventsConstitution = "events.constitution"
)

// AnalyticsWebhooks carries the webhook delivery log's changes (a delivery
// queued, attempted, queued again), keyed by the subscription id, for the
// ClickHouse copy only. It is not an events.* topic on purpose: the webhook
// dispatcher and the admin stream read those, and a delivery record that
// became a delivery would feed itself.
const AnalyticsWebhooks = "analytics.webhooks"
