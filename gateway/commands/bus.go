// Package commands is the gateway's side of the command pipeline: it
// publishes a command to its topic with a correlation id and this instance's
// reply address (topics/commandbus), waits, bounded, for the consumer's
// reply on gateway.replies, and answers it as the HTTP response.
package commands

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics/commandbus"
)

// Bus publishes commands and routes replies to the requests waiting for
// them: a commandbus.Bus whose failures answer 503.
type Bus struct {
	bus *commandbus.Bus
}

// Command is a command to send.
type Command = commandbus.Command

// NewBus starts consuming this instance's replies from the current end of
// gateway.replies (commandbus.New, which says why the producer needs only
// the leader's acknowledgement unless producerOpts say otherwise). With
// answerHops a request asking for its command's times (HeaderHops) gets
// them; without it (the default: they describe the platform's internals,
// not the caller's data) none does.
func NewBus(ctx context.Context, brokers []string, timeout time.Duration, answerHops bool, log *slog.Logger, producerOpts ...kgo.Opt) (*Bus, error) {
	b, err := commandbus.New(ctx, brokers, timeout, answerHops, log, producerOpts...)
	if err != nil {
		return nil, err
	}
	return &Bus{bus: b}, nil
}

// Close stops the clients.
func (b *Bus) Close() { b.bus.Close() }

// IdempotentID derives a stable command id from the caller, the endpoint and
// the client's Idempotency-Key, so a retry is recognised by the consumer and
// by Send. Without a key every request gets a fresh id.
func IdempotentID(userID, endpoint, key string) string {
	if key == "" {
		return schemas.NewID()
	}
	sum := sha256.Sum256([]byte(userID + "\x00" + endpoint + "\x00" + key))
	return "idem-" + hex.EncodeToString(sum[:20])
}

// RequestHash is the hash of a request body compared on replays.
func RequestHash(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// ErrTimeout means no reply came in time. The command may still be applied;
// a retry with the same Idempotency-Key returns its result.
var ErrTimeout = commandbus.ErrTimeout

// Send publishes cmd and waits for its reply. A command already applied
// (same id) is answered by the consumer with its stored reply, so a retry
// never applies twice. It returns apierr.Unavailable when the broker does
// not take the command, the request ends, or the reply does not come within
// the timeout (then wrapping ErrTimeout too).
func (b *Bus) Send(ctx context.Context, cmd Command) (schemas.Reply, error) {
	rep, err := b.bus.Send(ctx, cmd)
	switch {
	case err == nil:
		return rep, nil
	case errors.Is(err, commandbus.ErrTimeout):
		return schemas.Reply{}, fmt.Errorf("%w: %w", ErrTimeout, apierr.Unavailable())
	case errors.Is(err, commandbus.ErrPublish), ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return schemas.Reply{}, apierr.Unavailable()
	}
	return schemas.Reply{}, err
}

// Respond writes a reply as the HTTP answer, byte for byte, marking the
// answer of an already applied command with Idempotent-Replayed: true.
func Respond(c *fiber.Ctx, rep schemas.Reply) error {
	if rep.Replayed {
		c.Set(server.HeaderIdempotentReplayed, "true")
	}
	if len(rep.Hops) > 0 && c.Get(HeaderHops) != "" {
		c.Set(HeaderHops, formatHops(c.Context().Time().UnixNano(), rep.Hops, time.Now().UnixNano()))
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	return c.Status(rep.Status).Send(rep.Body)
}

// HeaderHops asks, on a request, for the times its command passed (any
// value), and carries them on the answer: comma-separated Unix nanoseconds
// of the request read, the command produced, acknowledged by the broker (0
// when its acknowledgement came after the reply), fetched by the applier,
// its batch begun, committed, the reply produced, seen by the gateway, and
// the answer written. The benchmark's latency budget (e2e/bench) reads it;
// an answer without a reply from an applier that stamps them has none, and
// so has every answer of a gateway started without LATENCY_HOPS=1.
const HeaderHops = "Platform-Hops"

func formatHops(accepted int64, hops []int64, written int64) string {
	b := make([]byte, 0, 20*(len(hops)+2))
	b = strconv.AppendInt(b, accepted, 10)
	for _, h := range hops {
		b = strconv.AppendInt(append(b, ','), h, 10)
	}
	b = strconv.AppendInt(append(b, ','), written, 10)
	return string(b)
}
