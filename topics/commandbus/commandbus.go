// Package commandbus is the request/reply of the command pipeline over
// Kafka: it publishes a command to its topic with a correlation id and this
// instance's reply address, and waits, bounded, for the consumer's reply on
// gateway.replies. The gateway answers HTTP requests through it
// (gateway/commands, which maps its failures to 503); the consumers' tests
// drive their pipelines through it, without the HTTP layer.
package commandbus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// Bus publishes commands and routes replies to the requests waiting for them.
type Bus struct {
	producer   *kgo.Client
	replies    *kgo.Client
	instanceID string
	timeout    time.Duration
	// hops: see New.
	hops bool
	log  *slog.Logger

	mu      sync.Mutex
	waiters map[string]chan schemas.Reply
}

// New starts consuming this instance's replies from the current end of
// gateway.replies, so that no reply to a command sent after New returns
// can be missed. With hops a reply carries the times its command passed
// (schemas.Reply.Hops, from the appliers' stamps); without it none does.
// producerOpts adjust the command producer.
func New(ctx context.Context, brokers []string, timeout time.Duration, hops bool, log *slog.Logger, producerOpts ...kgo.Opt) (*Bus, error) {
	// A command's outcome reaches the caller only as the consumer's reply,
	// sent after its Postgres commit, so by default the send needs only the
	// leader's acknowledgement (acks=1): a command lost before it was
	// applied times out (503) and its retry applies it once; the embedded
	// broker syncs an acks=1 record before any offset commit past it. On a
	// replicated cluster the topic is also what a restored database
	// re-applies from (consumers resume from their stored positions), so
	// the wiring passes kgo.RequiredAcks(kgo.AllISRAcks()) in producerOpts
	// there (later options win). Without idempotence a producer retry may
	// write a command twice; the consumer answers the second from its
	// stored result by the command id.
	opts := append([]kgo.Opt{kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite()}, producerOpts...)
	producer, err := topics.NewClient(brokers, opts...)
	if err != nil {
		return nil, err
	}
	ends, err := topics.EndOffsets(ctx, producer, topics.GatewayReplies)
	if err != nil {
		producer.Close()
		return nil, err
	}
	start := map[int32]kgo.Offset{}
	for p, o := range ends {
		start[p] = kgo.NewOffset().At(o)
	}
	replies, err := topics.NewClient(brokers,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topics.GatewayReplies: start}),
		kgo.FetchMaxWait(50*time.Millisecond))
	if err != nil {
		producer.Close()
		return nil, err
	}
	b := &Bus{producer: producer, replies: replies, timeout: timeout, hops: hops,
		instanceID: "gw-" + schemas.NewID(), log: log.With("component", "bus"),
		waiters: map[string]chan schemas.Reply{}}
	go b.route(ctx)
	return b, nil
}

// Close stops the clients.
func (b *Bus) Close() {
	b.replies.Close()
	b.producer.Close()
}

func (b *Bus) route(ctx context.Context) {
	for {
		fetches := b.replies.PollFetches(ctx)
		if fetches.IsClientClosed() || ctx.Err() != nil {
			return
		}
		seen := time.Now().UnixNano()
		fetches.EachRecord(func(r *kgo.Record) {
			if string(r.Key) != b.instanceID {
				return
			}
			env, err := schemas.Decode(r.Value)
			if err != nil {
				b.log.Warn("unreadable reply", "err", err)
				return
			}
			reply, err := schemas.DataAs[schemas.Reply](env)
			if err != nil {
				b.log.Warn("unreadable reply", "err", err)
				return
			}
			if b.hops {
				if hops := topics.HopsOf(r); len(hops) == 4 {
					// produced and acknowledged are filled by Send.
					reply.Hops = append(make([]int64, 2, 7), append(hops, seen)...)
				}
			}
			b.mu.Lock()
			ch := b.waiters[env.CorrelationID]
			delete(b.waiters, env.CorrelationID)
			b.mu.Unlock()
			if ch != nil {
				ch <- reply
			}
		})
	}
}

// Command is a command to send.
type Command struct {
	Topic string
	// Env is the command envelope; Send fills CorrelationID and ReplyTo.
	Env schemas.Envelope
}

// Errors of Send.
var (
	// ErrTimeout means no reply came in time. The command may still be
	// applied; a retry with the same id returns its result.
	ErrTimeout = errors.New("command reply timed out")
	// ErrPublish means the broker did not take the command.
	ErrPublish = errors.New("publishing command failed")
)

// Send publishes cmd and waits for its reply. A command already applied
// (same id) is answered by the consumer with its stored reply, so a retry
// never applies twice. It fails with ErrTimeout when the reply does not come
// within the timeout, ErrPublish when the broker refuses the command, and
// ctx's error when ctx ends first.
func (b *Bus) Send(ctx context.Context, cmd Command) (schemas.Reply, error) {
	cmd.Env.CorrelationID = schemas.NewID()
	cmd.Env.ReplyTo = b.instanceID
	rec, err := topics.Record(cmd.Topic, cmd.Env)
	if err != nil {
		return schemas.Reply{}, err
	}
	// The command carries the request's trace: its traceparent header, or,
	// with the producer's kotel hooks, that of a publish span under it.
	topics.SetTrace(rec, trace.SpanContextFromContext(ctx))
	rec.Context = ctx
	ch := make(chan schemas.Reply, 1)
	b.mu.Lock()
	b.waiters[cmd.Env.CorrelationID] = ch
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.waiters, cmd.Env.CorrelationID)
		b.mu.Unlock()
	}()

	produced := make(chan error, 1)
	var acked atomic.Int64
	sent := time.Now().UnixNano()
	b.producer.Produce(ctx, rec, func(_ *kgo.Record, err error) {
		acked.Store(time.Now().UnixNano())
		produced <- err
	})

	timer := time.NewTimer(b.timeout)
	defer timer.Stop()
	for {
		select {
		case rep := <-ch:
			if len(rep.Hops) == 7 {
				// 0 when the reply came before the broker's acknowledgement
				// was handled.
				rep.Hops[0], rep.Hops[1] = sent, acked.Load()
			}
			return rep, nil
		case err := <-produced:
			if err != nil {
				b.log.Warn("publishing command failed", "type", cmd.Env.Type, "err", err)
				return schemas.Reply{}, fmt.Errorf("%w: %w", ErrPublish, err)
			}
			produced = nil
		case <-timer.C:
			return schemas.Reply{}, ErrTimeout
		case <-ctx.Done():
			return schemas.Reply{}, ctx.Err()
		}
	}
}
