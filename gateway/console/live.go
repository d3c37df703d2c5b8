package console

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/clickhouse"
	"github.com/fintech/platform/topics"
)

// Live counts the money flow per second from the event stream (events.fiat
// and events.ledger, read from their end by a group-less consumer) for the
// seconds the ClickHouse copy has not caught up with. It reads only while
// the console is watched: the first Flow call starts it, and it stops after
// idle without one, so a platform nobody watches pays nothing for it.
type Live struct {
	brokers []string
	log     *slog.Logger
	now     func() time.Time
	idle    time.Duration
	window  time.Duration

	mu        sync.Mutex
	running   bool
	startedAt time.Time
	asked     time.Time
	flow      clickhouse.Flow
	// recent are the last events.fiat events, newest last.
	recent []schemas.ConsoleEvent
}

// recentMax is how many recent events the tap keeps.
const recentMax = 50

// NewLive builds the tap; it keeps window of seconds.
func NewLive(brokers []string, log *slog.Logger, now func() time.Time, window time.Duration) *Live {
	return &Live{brokers: brokers, log: log.With("component", "console-live"), now: now, idle: time.Minute, window: window,
		flow: clickhouse.Flow{Transfers: map[int64]int64{}, Volume: map[string]map[int64]int64{}}}
}

// Flow returns a copy of the counted flow and since when the tap has been
// reading (zero when it just started), starting it when it is not running.
// ctx bounds the tap's life (the server's).
func (l *Live) Flow(ctx context.Context) (clickhouse.Flow, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.asked = l.now()
	if !l.running && len(l.brokers) > 0 {
		l.running = true
		l.startedAt = time.Time{}
		l.flow = clickhouse.Flow{Transfers: map[int64]int64{}, Volume: map[string]map[int64]int64{}}
		go l.run(ctx)
	}
	out := clickhouse.Flow{Transfers: make(map[int64]int64, len(l.flow.Transfers)), Volume: map[string]map[int64]int64{}}
	for s, n := range l.flow.Transfers {
		out.Transfers[s] = n
	}
	for c, m := range l.flow.Volume {
		out.Volume[c] = make(map[int64]int64, len(m))
		for s, a := range m {
			out.Volume[c][s] = a
		}
	}
	return out, l.startedAt
}

// Recent returns the last events.fiat events read, newest first, starting
// the tap when it is not running.
func (l *Live) Recent(ctx context.Context) []schemas.ConsoleEvent {
	l.Flow(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]schemas.ConsoleEvent, 0, len(l.recent))
	for i := len(l.recent) - 1; i >= 0; i-- {
		out = append(out, l.recent[i])
	}
	return out
}

func (l *Live) stop() {
	l.mu.Lock()
	l.running = false
	l.mu.Unlock()
}

// run reads until ctx ends or nobody asked for idle.
func (l *Live) run(ctx context.Context) {
	defer l.stop()
	cl, err := topics.NewClient(l.brokers,
		kgo.ConsumeTopics(topics.EventsFiat, topics.EventsLedger),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()),
		kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		l.log.Warn("live flow unavailable", "err", err)
		return
	}
	defer cl.Close()
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fetches := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		l.mu.Lock()
		if l.startedAt.IsZero() {
			// The consumer reads from the end once its first poll ran:
			// every second from here on is complete.
			l.startedAt = l.now().Truncate(time.Second).Add(time.Second)
		}
		fetches.EachRecord(func(rec *kgo.Record) {
			for _, r := range topics.Expand(rec) {
				l.count(r)
			}
		})
		l.prune()
		quiet := l.now().Sub(l.asked) > l.idle
		l.mu.Unlock()
		if quiet {
			return
		}
	}
}

// liveEvent is what the tap reads of an event record.
type liveEvent struct {
	OccurredAt time.Time `json:"occurredAt"`
	Data       struct {
		Kind        string  `json:"kind"`
		AmountCents *int64  `json:"amountCents"`
		Currency    *string `json:"currency"`
		Timestamp   string  `json:"timestamp"`
	} `json:"data"`
}

// count adds one record (l.mu held). Transfers are bucketed by the event's
// occurredAt and volume by the ledger entry's timestamp, as the ClickHouse
// copy buckets them.
func (l *Live) count(rec *kgo.Record) {
	typ := topics.Header(rec, "type")
	if rec.Topic == topics.EventsFiat {
		l.keep(rec, typ)
	}
	if typ != schemas.TypeTransferCompleted && typ != schemas.TypeLedgerEntryAdded {
		return
	}
	var ev liveEvent
	if json.Unmarshal(rec.Value, &ev) != nil {
		return
	}
	if typ == schemas.TypeTransferCompleted {
		l.flow.Transfers[ev.OccurredAt.Unix()]++
		return
	}
	if ev.Data.Kind != schemas.LedgerKindTransfer || ev.Data.AmountCents == nil || ev.Data.Currency == nil {
		return
	}
	at, err := time.Parse(time.RFC3339Nano, ev.Data.Timestamp)
	if err != nil {
		at = ev.OccurredAt
	}
	c := *ev.Data.Currency
	if l.flow.Volume[c] == nil {
		l.flow.Volume[c] = map[int64]int64{}
	}
	l.flow.Volume[c][at.Unix()] += *ev.Data.AmountCents
}

// keep adds an events.fiat record to the recent events (l.mu held). Its
// data is kept as the JSON text it is: the page shows it as text.
func (l *Live) keep(rec *kgo.Record, typ string) {
	var env struct {
		ID         string          `json:"id"`
		OccurredAt time.Time       `json:"occurredAt"`
		Data       json.RawMessage `json:"data"`
	}
	if json.Unmarshal(rec.Value, &env) != nil {
		return
	}
	if len(l.recent) == recentMax {
		l.recent = append(l.recent[:0], l.recent[1:]...)
	}
	l.recent = append(l.recent, schemas.ConsoleEvent{ID: env.ID, Type: typ, OccurredAt: env.OccurredAt.UTC(), Data: string(env.Data)})
}

// prune drops the seconds older than the window (l.mu held).
func (l *Live) prune() {
	oldest := l.now().Add(-l.window).Unix()
	for s := range l.flow.Transfers {
		if s < oldest {
			delete(l.flow.Transfers, s)
		}
	}
	for _, m := range l.flow.Volume {
		for s := range m {
			if s < oldest {
				delete(m, s)
			}
		}
	}
}
