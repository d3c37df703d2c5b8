package topics

// AnalyticsWebhooks carries the webhook delivery log's changes (a delivery
// queued, attempted, queued again), keyed by the subscription id, for the
// ClickHouse copy only. It is not an events.* topic on purpose: the webhook
// dispatcher and the admin stream read those, and a delivery record that
// became a delivery would feed itself.
const AnalyticsWebhooks = "analytics.webhooks"

// SinkTopics lists what the ClickHouse sink copies: every events.* topic
// and AnalyticsWebhooks.
func SinkTopics() []string { return append(EventTopics(), AnalyticsWebhooks) }
