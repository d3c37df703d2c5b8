package webhooks

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
)

// Audience tells whom an event record is about (consumers/webhooks.Audience,
// wired in cmd/platform): the same rules that match subscriptions.
type Audience interface {
	Users(ctx context.Context, rec *kgo.Record) ([]string, error)
}

// myEventsRequest is the request of GET /me/events/stream.
type myEventsRequest struct {
	LastEventIDHeader string `header:"Last-Event-ID" json:"-" description:"resume after this event id"`
}

// myEvents serves GET /me/events/stream: server-sent events of the events
// about the caller only (the events their subscriptions would receive,
// without the fiat admins' everything), in the admin stream's format. The
// token is taken from the Authorization header only. `platform webhooks
// listen` reads it to forward deliveries to a local URL.
func (h *Handlers) myEvents(c *fiber.Ctx, req *myEventsRequest) error {
	p, _ := auth.User(c)
	me := p.UserID
	if !h.streams.take(me) {
		c.Set(fiber.HeaderRetryAfter, "30")
		return apierr.New(http.StatusTooManyRequests, apierr.CodeRateLimited,
			fmt.Sprintf("at most %d event streams per user may be open at once; close one", MaxUserStreams))
	}
	backlog, l := h.stream.Subscribe(req.LastEventIDHeader, 0)
	aud := h.audience
	mine := func(m Message) bool {
		rec := m.Record()
		if rec == nil {
			return false
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		users, err := aud.Users(ctx, rec)
		if err != nil {
			return false
		}
		for _, u := range users {
			if u == me {
				return true
			}
		}
		return false
	}
	h.serveStream(c, backlog, l, mine, func() { h.streams.release(me) })
	return nil
}

// MaxUserStreams is how many /me/events/stream connections one user may
// hold open at once (per gateway process); one more is 429 rate_limited.
// Each stream holds a listener that sees every event and asks whom it is
// about, so unbounded streams of one user are unbounded work.
const MaxUserStreams = 5

// streamSlots counts open streams per user.
type streamSlots struct {
	mu   sync.Mutex
	open map[string]int
}

func (s *streamSlots) take(user string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[user] >= MaxUserStreams {
		return false
	}
	s.open[user]++
	return true
}

func (s *streamSlots) release(user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[user]--; s.open[user] <= 0 {
		delete(s.open, user)
	}
}
