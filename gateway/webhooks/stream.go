package webhooks

import (
	"bufio"
	"context"
	_ "embed"
	"errors"
	"html/template"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/swaggest/jsonschema-go"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/htmlpage"
	"github.com/fintech/platform/gateway/server"
)

//go:embed static/stream.html
var streamHTML string

// streamPage is the admin stream page; its inline style and script carry the
// response's CSP nonce.
var streamPage = template.Must(template.New("stream").Parse(streamHTML))

// maxRecent caps the `recent` query of the stream.
const maxRecent = 500

// eventsRequest is the request of GET /admin/events.
type eventsRequest struct {
	Ticket            string      `query:"ticket" json:"-" description:"a single-use ticket from POST /admin/events/ticket, for EventSource, which cannot send an Authorization header; a bearer token in the URL (access_token) is refused"`
	LastEventIDHeader string      `header:"Last-Event-ID" json:"-" description:"resume after this event id"`
	LastEventID       string      `query:"lastEventId" json:"-" description:"resume after this event id (when no Last-Event-ID header is sent)"`
	Recent            recentCount `query:"recent" json:"-"`
}

// recentCount is the number of kept events a fresh connection replays
// first: a non-negative integer, clamped to maxRecent.
type recentCount string

// PrepareJSONSchema describes the count as the integer it is.
func (recentCount) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithType(jsonschema.Integer.Type()).WithMinimum(0).WithDefault(0).
		WithDescription("on a fresh connection, first replay the last N kept events; larger values are clamped to 500")
	return nil
}

// events serves GET /admin/events as server-sent events: one message per
// event (`id:` the event id, `event:` its type, `data:` the delivery payload
// JSON), a `: heartbeat` comment every Heartbeat, and with a Last-Event-ID
// header (or `lastEventId` query) first the kept events after that one;
// without it, `recent=N` first replays the last N kept events (dashboards
// use it to start with some history; default 0, at most 500). The
// stream ends when the client goes away (a failed write or flush), when it
// falls too far behind (it reconnects and resumes), or when the server
// shuts down.
func (h *Handlers) events(c *fiber.Ctx, req *eventsRequest) error {
	last := req.LastEventIDHeader
	if last == "" {
		last = req.LastEventID
	}
	recent := 0
	if q := string(req.Recent); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 0 {
			return apierr.Validation(map[string]string{"recent": "must be a non-negative integer"})
		}
		recent = min(n, maxRecent)
	}
	backlog, l := h.stream.Subscribe(last, recent)
	h.serveStream(c, backlog, l, func(Message) bool { return true }, nil)
	return nil
}

// serveStream answers c with server-sent events: the backlog, then every
// message the listener receives, each one keep passes; a `: heartbeat`
// comment every Heartbeat. It ends when the client goes away (a failed
// write or flush), the listener is closed (too far behind), the server
// shuts down, or the login session the stream was opened with ends (logout,
// revocation, expiry): authentication happened once, at connect, so a
// stream left open would otherwise outlive its session.
func (h *Handlers) serveStream(c *fiber.Ctx, backlog []Message, l *Listener, keep func(Message) bool, done func()) {
	live := h.credentialLive(c)
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set(fiber.HeaderConnection, "keep-alive")
	c.Set("X-Accel-Buffering", "no")
	heartbeat := h.cfg.Heartbeat
	// Closed when the server starts shutting down: open streams end at once
	// instead of holding the shutdown until its timeout.
	shutdown := c.Context().Done()
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		// fasthttp runs the writer at once, also for a client already
		// gone, so done (a released stream slot) always runs.
		if done != nil {
			defer done()
		}
		defer l.Close()
		if _, err := w.WriteString("retry: 3000\n: connected\n\n"); err != nil || w.Flush() != nil {
			return
		}
		for _, m := range backlog {
			if keep(m) && writeMessage(w, m) != nil {
				return
			}
		}
		tick := time.NewTicker(heartbeat)
		defer tick.Stop()
		check := time.NewTicker(h.cfg.SessionCheck)
		defer check.Stop()
		for {
			select {
			case <-shutdown:
				return
			case <-check.C:
				if !live() {
					_, _ = w.WriteString(": session ended\n\n")
					_ = w.Flush()
					return
				}
			case m, ok := <-l.C:
				if !ok {
					return
				}
				if keep(m) && writeMessage(w, m) != nil {
					return
				}
			case <-tick.C:
				if _, err := w.WriteString(": heartbeat\n\n"); err != nil || w.Flush() != nil {
					return
				}
			}
		}
	})
}

// credentialLive returns the check an open stream runs on c's caller: false
// once the login session, or the API key, it authenticated with has ended
// (logout, revocation, expiry). A caller with neither (set by a test)
// is not checked. A store error keeps the stream: the next check asks again.
func (h *Handlers) credentialLive(c *fiber.Ctx) func() bool {
	p, _ := auth.User(c)
	var ended func(ctx context.Context) bool
	switch {
	case p.KeyID != "":
		ended = func(ctx context.Context) bool { return errors.Is(h.authn.CheckKey(ctx, p), auth.ErrKeyEnded) }
	case p.SessionID != "":
		ended = func(ctx context.Context) bool {
			return errors.Is(h.authn.Sessions().Check(ctx, p), auth.ErrSessionEnded)
		}
	default:
		return func() bool { return true }
	}
	return func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return !ended(ctx)
	}
}

// writeMessage writes one event and flushes it. The payload is compact JSON
// on one line.
func writeMessage(w *bufio.Writer, m Message) error {
	if _, err := w.WriteString("id: " + m.ID + "\nevent: " + m.Type + "\ndata: "); err != nil {
		return err
	}
	if _, err := w.Write(m.Body()); err != nil {
		return err
	}
	if _, err := w.WriteString("\n\n"); err != nil {
		return err
	}
	return w.Flush()
}

// page serves the admin stream page. It holds no data: it asks for a token
// (or an admin login), mints a single-use ticket with it and opens the
// stream with the ticket, never with the token in the URL.
func (h *Handlers) page(c *fiber.Ctx, _ *server.NoRequest) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	return htmlpage.Render(c, fiber.StatusOK, streamPage, htmlpage.Policy{Connect: true}, func(nonce string) any {
		return struct{ Nonce string }{nonce}
	})
}
