package topics

// SinkTopics lists what the ClickHouse sink copies: every events.* topic
// and AnalyticsWebhooks.
func SinkTopics() []string { return append(EventTopics(), AnalyticsWebhooks) }
