package webhooks

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/twmb/franz-go/pkg/kgo"

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
	h.serveStream(c, backlog, l, mine)
	return nil
}
