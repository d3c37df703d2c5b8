package webhooks

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/topics"
)

// Message is one admin stream message: the event id, its type and the
// delivery payload JSON.
type Message struct {
	ID   string
	Type string
	// Payload is the delivery payload JSON; when nil, Body renders it from
	// the event record on first use.
	Payload []byte
	render  *lazyPayload
}

// Body returns the delivery payload JSON. Events are rendered only when a
// listener (or a resume) needs them: most events pass through the ring with
// nobody watching, and parsing every one of them was a tenth of the
// process's CPU under load.
func (m Message) Body() []byte {
	if m.Payload != nil || m.render == nil {
		return m.Payload
	}
	return m.render.get()
}

// Record returns the event record the message was read from (nil for a
// message published with its payload), for listeners that need more of
// the envelope than the payload shows, such as whom the event is about.
func (m Message) Record() *kgo.Record {
	if m.render == nil {
		return nil
	}
	return m.render.rec
}

type lazyPayload struct {
	once   sync.Once
	rec    *kgo.Record
	at     time.Time
	format EventFormat
	b      []byte
}

func (l *lazyPayload) get() []byte {
	l.once.Do(func() {
		l.b = l.format.Payload(l.rec, l.at)
	})
	return l.b
}

// EventFormat reads the event records a Hub fans out. The hub only moves
// bytes; what an event's id, type and payload are is the reader's contract
// (consumers/webhooks renders the webhook delivery payload).
type EventFormat interface {
	// Head returns the id and type of an event record whose headers lack
	// them.
	Head(rec *kgo.Record) (id, typ string, err error)
	// Payload renders the message body of an event record received at.
	Payload(rec *kgo.Record, at time.Time) []byte
}

// HubConfig tunes a Hub.
type HubConfig struct {
	// Ring is how many recent events are kept for Last-Event-ID resumption.
	// Default 1000.
	Ring int
	// Backfill is how many records per partition of each events.* topic are
	// read back at start to fill the ring, so that a client resuming after
	// a gateway restart still finds its place. Default 20; negative: none.
	Backfill int64
	// Buffer is how many messages a listener may lag behind before it is
	// cut off (its stream ends; it reconnects with Last-Event-ID). Default
	// 256.
	Buffer int
}

func (c *HubConfig) setDefaults() {
	if c.Ring <= 0 {
		c.Ring = 1000
	}
	switch {
	case c.Backfill == 0:
		c.Backfill = 20
	case c.Backfill < 0: // none
		c.Backfill = 0
	}
	if c.Buffer <= 0 {
		c.Buffer = 256
	}
}

// Hub fans the events.* topics out to admin stream listeners. It reads them
// with a group-less franz-go consumer that starts near the end of every
// partition (each gateway sees every event), keeps the last Ring events in
// memory, and hands each new one to every listener.
type Hub struct {
	cfg    HubConfig
	format EventFormat
	client *kgo.Client
	log    *slog.Logger
	now    func() time.Time

	mu        sync.Mutex
	ring      []Message
	listeners map[*Listener]struct{}
}

// Listener receives the messages published after it subscribed. C is closed
// when the listener falls too far behind or the hub stops.
type Listener struct {
	C   <-chan Message
	c   chan Message
	hub *Hub
}

// NewHub builds a hub reading the events.* topics with format; brokers may
// be nil (and format with them) for a hub fed only by Publish (tests).
func NewHub(cfg HubConfig, brokers []string, format EventFormat, log *slog.Logger, now func() time.Time) (*Hub, error) {
	cfg.setDefaults()
	if log == nil || now == nil || (len(brokers) > 0 && format == nil) {
		return nil, errors.New("webhook hub: nil dependency")
	}
	h := &Hub{cfg: cfg, format: format, log: log.With("component", "admin-stream"), now: now,
		listeners: map[*Listener]struct{}{}}
	if len(brokers) > 0 {
		client, err := topics.NewClient(brokers,
			kgo.ConsumeTopics(topics.EventTopics()...),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd().Relative(-cfg.Backfill)),
			kgo.FetchMaxWait(100*time.Millisecond),
		)
		if err != nil {
			return nil, err
		}
		h.client = client
	}
	return h, nil
}

// Run feeds the hub until ctx is cancelled, then closes every listener.
func (h *Hub) Run(ctx context.Context) error {
	defer h.closeAll()
	if h.client == nil {
		<-ctx.Done()
		return nil
	}
	defer h.client.Close()
	for {
		fetches := h.client.PollFetches(ctx)
		if fetches.IsClientClosed() || ctx.Err() != nil {
			return nil
		}
		fetches.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.Canceled) {
				h.log.Warn("fetch error", "topic", topic, "partition", p, "err", err)
			}
		})
		fetches.EachRecord(func(rec *kgo.Record) {
			for _, r := range topics.Expand(rec) {
				id, typ := topics.Header(r, "id"), topics.Header(r, "type")
				if id == "" || typ == "" {
					var err error
					if id, typ, err = h.format.Head(r); err != nil {
						continue
					}
				}
				h.Publish(Message{ID: id, Type: typ, render: &lazyPayload{rec: r, at: h.now(), format: h.format}})
			}
		})
	}
}

// Publish appends a message to the ring and hands it to every listener. A
// listener whose buffer is full is cut off rather than waited for.
func (h *Hub) Publish(m Message) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ring = append(h.ring, m)
	if len(h.ring) >= 2*h.cfg.Ring {
		h.ring = append([]Message(nil), h.ring[len(h.ring)-h.cfg.Ring:]...)
	}
	for l := range h.listeners {
		select {
		case l.c <- m:
		default:
			delete(h.listeners, l)
			close(l.c)
		}
	}
}

// Subscribe registers a listener. With lastID set (a Last-Event-ID) it also
// returns the kept events after that one: those after its position when it
// is still in the ring, else those with a greater id (ids are time-ordered
// ksuids). Without lastID it returns the last recent kept events (none when
// recent is 0).
func (h *Hub) Subscribe(lastID string, recent int) ([]Message, *Listener) {
	h.mu.Lock()
	defer h.mu.Unlock()
	l := &Listener{c: make(chan Message, h.cfg.Buffer), hub: h}
	l.C = l.c
	h.listeners[l] = struct{}{}
	return h.backlog(lastID, recent), l
}

func (h *Hub) backlog(lastID string, recent int) []Message {
	ring := h.ring
	if len(ring) > h.cfg.Ring {
		ring = ring[len(ring)-h.cfg.Ring:]
	}
	if lastID == "" {
		if recent <= 0 {
			return nil
		}
		return append([]Message(nil), ring[max(len(ring)-recent, 0):]...)
	}
	for i := len(ring) - 1; i >= 0; i-- {
		if ring[i].ID == lastID {
			return append([]Message(nil), ring[i+1:]...)
		}
	}
	var out []Message
	for _, m := range ring {
		if m.ID > lastID {
			out = append(out, m)
		}
	}
	return out
}

// Close unregisters the listener.
func (l *Listener) Close() {
	h := l.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.listeners[l]; ok {
		delete(h.listeners, l)
		close(l.c)
	}
}

func (h *Hub) closeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for l := range h.listeners {
		delete(h.listeners, l)
		close(l.c)
	}
}

// Listeners returns how many listeners are subscribed.
func (h *Hub) Listeners() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.listeners)
}
