package schemas

import "time"

// The admin console's contract (/admin and /api/platform/admin/...): the
// answers of its data routes and of the dead-letter tooling.

// DLQ record states.
const (
	DLQStateParked    = "parked"
	DLQStateReplayed  = "replayed"
	DLQStateDiscarded = "discarded"
)

// DLQRecord is one record parked on a <topic>.dlq topic, with what
// operators decided about it.
type DLQRecord struct {
	ID          string `json:"id" required:"true" description:"<dlq topic>:<partition>:<offset>, stable for the life of the record"`
	Topic       string `json:"topic" required:"true" description:"the DLQ topic, e.g. fiat.commands.dlq"`
	SourceTopic string `json:"sourceTopic" required:"true" description:"where a replay publishes it"`
	Partition   int32  `json:"partition" required:"true"`
	Offset      int64  `json:"offset" required:"true"`
	Key         string `json:"key" required:"true" description:"the record key (the partitioning key of its command)"`
	CommandID   string `json:"commandId" required:"true" description:"the envelope id: a replay keeps it, so the command is applied at most once; empty when the record is unreadable"`
	Type        string `json:"type" required:"true" description:"the envelope type, when readable"`
	Error       string `json:"error" required:"true" description:"why the consumer parked it"`
	// FirstSeenAt is when the record was parked (its DLQ timestamp).
	FirstSeenAt time.Time  `json:"firstSeenAt" required:"true" description:"when it was parked"`
	State       string     `json:"state" required:"true" enum:"parked,replayed,discarded"`
	Replays     int        `json:"replays" required:"true" description:"how many times it was published again"`
	DecidedBy   string     `json:"decidedBy" required:"true" description:"who replayed or discarded it last (admin:<user id> or cli:<os user>); empty while parked"`
	DecidedAt   *time.Time `json:"decidedAt" required:"true"`
	ReplayOf    string     `json:"replayOf" required:"true" description:"the id of the parked record this one is a replay of (replayed and parked again); empty otherwise"`
}

// ConsoleThroughput is the money flow of the last minutes, one point per
// second: completed transfers and their volume per currency.
type ConsoleThroughput struct {
	// Seconds are the Unix seconds of the points, oldest first.
	Seconds   []int64 `json:"seconds" required:"true" nullable:"false" description:"Unix seconds of the points, oldest first"`
	Transfers []int64 `json:"transfers" required:"true" nullable:"false" description:"transfers completed in each second"`
	// Volume is the transferred amount per currency and second, in minor
	// units.
	Volume []ConsoleCurrencySeries `json:"volume" required:"true" nullable:"false"`
	// Sources name where the points come from: clickhouse (the analytics
	// copy, deduplicated) and stream (the live event stream, for the
	// seconds the copy has not caught up with).
	Sources []string `json:"sources" required:"true" nullable:"false"`
}

// ConsoleCurrencySeries is one currency's amounts per point, minor units.
type ConsoleCurrencySeries struct {
	Currency string  `json:"currency" required:"true"`
	Minor    []int64 `json:"minor" required:"true" nullable:"false" description:"integer minor units per point"`
}

// ConsoleLag is the lag of every consumer group, read from the broker.
type ConsoleLag struct {
	Groups []ConsoleGroupLag `json:"groups" required:"true" nullable:"false"`
	At     time.Time         `json:"at" required:"true"`
}

// ConsoleGroupLag is the records a group has not yet committed past.
type ConsoleGroupLag struct {
	Group string `json:"group" required:"true"`
	Lag   int64  `json:"lag" required:"true"`
}

// DLQRecordDetail is one parked record with every decision about it.
type DLQRecordDetail struct {
	Record    DLQRecord     `json:"record" required:"true"`
	Decisions []DLQDecision `json:"decisions" required:"true" nullable:"false" description:"every replay and discard of the record, oldest first (the dead letters' audit log)"`
}

// DLQDecision is one audited replay or discard of a parked record.
type DLQDecision struct {
	Action string    `json:"action" required:"true" enum:"dlq.replay,dlq.discard"`
	Actor  string    `json:"actor" required:"true" description:"admin:<user id> or cli:<os user>"`
	Detail string    `json:"detail" required:"true"`
	At     time.Time `json:"at" required:"true"`
}

// ConsoleParked counts the parked records per DLQ topic.
type ConsoleParked struct {
	Topics []ConsoleParkedTopic `json:"topics" required:"true" nullable:"false"`
	At     time.Time            `json:"at" required:"true"`
}

// ConsoleParkedTopic is one DLQ topic's count.
type ConsoleParkedTopic struct {
	Topic string `json:"topic" required:"true"`
	// Parked counts the records no operator replayed or discarded.
	Parked int64 `json:"parked" required:"true" description:"records no operator replayed or discarded"`
	Total  int64 `json:"total" required:"true" description:"records the topic holds"`
}

// ConsoleDeliveries counts the webhook deliveries per state.
type ConsoleDeliveries struct {
	States []ConsoleStateCount `json:"states" required:"true" nullable:"false"`
	At     time.Time           `json:"at" required:"true"`
}

// ConsoleStateCount is the number of rows in one state.
type ConsoleStateCount struct {
	State string `json:"state" required:"true"`
	Count int64  `json:"count" required:"true"`
}

// ConsoleEvents are the latest events.fiat events the console's live tap
// read, newest first.
type ConsoleEvents struct {
	Events []ConsoleEvent `json:"events" required:"true" nullable:"false"`
}

// ConsoleEvent is one event; Data is its JSON payload as text (the page
// shows it as text, never as markup).
type ConsoleEvent struct {
	ID         string    `json:"id" required:"true"`
	Type       string    `json:"type" required:"true"`
	OccurredAt time.Time `json:"occurredAt" required:"true"`
	Data       string    `json:"data" required:"true" description:"the event's data, JSON text"`
}

// ConsoleAudit is the background audit's last run (the chain walk and the
// ledger against the modules); the console raises an alarm while a check
// failed.
type ConsoleAudit struct {
	// RanAt is nil until the first run.
	RanAt  *time.Time          `json:"ranAt" required:"true" description:"when the last run completed; null before the first"`
	Failed int                 `json:"failed" required:"true" description:"checks that failed in the last run"`
	Checks []ConsoleAuditCheck `json:"checks" required:"true" nullable:"false"`
}

// ConsoleAuditCheck is one check of an audit run.
type ConsoleAuditCheck struct {
	Check  string `json:"check" required:"true"`
	Status string `json:"status" required:"true" enum:"ok,FAILED,SKIPPED"`
	Detail string `json:"detail" required:"true" description:"counts and a few ids when it failed; why when it was skipped"`
}

// ConsoleSlowRequests are the latest requests this gateway process answered
// slowly, each with the trace that follows it through the platform.
type ConsoleSlowRequests struct {
	ThresholdMs int64                `json:"thresholdMs" required:"true" description:"a request answered in this many milliseconds or more is kept (SLOW_REQUEST_THRESHOLD; 0: none kept)"`
	Items       []ConsoleSlowRequest `json:"items" required:"true" nullable:"false" description:"newest first, at most 50, of the gateway process that answered this request"`
}

// ConsoleSlowRequest is one slow answer.
type ConsoleSlowRequest struct {
	At        time.Time `json:"at" required:"true"`
	Method    string    `json:"method" required:"true"`
	Route     string    `json:"route" required:"true" description:"the route's pattern, not the path with its ids"`
	Status    int       `json:"status" required:"true"`
	Ms        float64   `json:"ms" required:"true" description:"milliseconds from the request to its answer"`
	TraceID   string    `json:"traceId" required:"true" description:"the W3C trace id: the traceId of its log lines and its spans"`
	RequestID string    `json:"requestId" required:"true"`
	TraceURL  *string   `json:"traceUrl" required:"true" description:"the trace in the tracing UI (TRACE_URL_TEMPLATE), null when none is configured"`
}
