package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/segmentio/ksuid"

	dispatch "github.com/fintech/platform/consumers/webhooks"
	"github.com/fintech/platform/schemas"
)

// webhooksUsage describes `platform webhooks`.
const webhooksUsage = `usage: platform webhooks listen --forward-to URL [--token T] [--server URL] [--secret whsec_…] [--events a,b]

Follows your own events from the server (GET /api/fiat/me/events/stream) and
re-delivers each to URL, signed like a webhook delivery (Standard Webhooks
headers and X-Platform-Signature) with the secret it prints. It only ever
posts to URL.

  --forward-to URL  where to POST each event (required), e.g. http://127.0.0.1:3000/hook
  --token T         your bearer token (default $PLATFORM_TOKEN; prefer it: ps shows arguments)
  --server URL      the platform (default $PLATFORM_URL, else http://$PLATFORM_ADDR, else http://127.0.0.1:8080)
  --secret S        sign with this secret (default: a new whsec_ secret, printed)
  --events a,b      forward only these event types (default: all)
`

// listenOptions are the parsed flags of `platform webhooks listen`.
type listenOptions struct {
	forwardTo, token, server, secret string
	events                           map[string]bool
}

// runWebhooks runs `platform webhooks …` until interrupted and returns the
// exit code.
func runWebhooks(ctx context.Context, args []string, getenv func(string) string) int {
	err := cmdWebhooks(ctx, args, getenv, os.Stdout)
	var usage usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &usage):
		fmt.Fprintln(os.Stderr, usage.msg)
		return 2
	default:
		fmt.Fprintln(os.Stderr, "platform webhooks: "+err.Error())
		return 1
	}
}

// cmdWebhooks runs `platform webhooks listen`. It needs no configuration
// beyond its flags: it talks to a running platform over HTTP.
func cmdWebhooks(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "listen" {
		return usageError{webhooksUsage}
	}
	opts, err := parseListen(args[1:], getenv)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Ready. Forwarding your events from %s to %s\n", opts.server, opts.forwardTo)
	fmt.Fprintf(stdout, "Your webhook signing secret is %s\n", opts.secret)
	return newForwarder(opts, stdout).run(ctx)
}

func parseListen(args []string, getenv func(string) string) (listenOptions, error) {
	var o listenOptions
	var events string
	fs := flag.NewFlagSet("webhooks listen", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.forwardTo, "forward-to", "", "")
	fs.StringVar(&o.token, "token", getenv("PLATFORM_TOKEN"), "")
	fs.StringVar(&o.server, "server", defaultServer(getenv), "")
	fs.StringVar(&o.secret, "secret", "", "")
	fs.StringVar(&events, "events", "", "")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return o, usageError{webhooksUsage}
	}
	if u, err := url.Parse(o.forwardTo); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return o, usageError{"webhooks listen: --forward-to must be an absolute http(s) URL\n\n" + webhooksUsage}
	}
	if u, err := url.Parse(o.server); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return o, usageError{"webhooks listen: --server must be an absolute http(s) URL\n\n" + webhooksUsage}
	}
	o.server = strings.TrimRight(o.server, "/")
	if o.token == "" {
		return o, usageError{"webhooks listen: a token is needed (--token or PLATFORM_TOKEN)\n\n" + webhooksUsage}
	}
	if o.secret == "" {
		s, err := schemas.NewWebhookSecret()
		if err != nil {
			return o, err
		}
		o.secret = s
	}
	if events != "" {
		o.events = map[string]bool{}
		for _, e := range strings.Split(events, ",") {
			if e = strings.TrimSpace(e); e != "" {
				o.events[e] = true
			}
		}
	}
	return o, nil
}

func defaultServer(getenv func(string) string) string {
	if s := getenv("PLATFORM_URL"); s != "" {
		return s
	}
	if a := getenv("PLATFORM_ADDR"); a != "" {
		return "http://" + a
	}
	return "http://127.0.0.1:8080"
}

// forwarder reads the caller's event stream and posts each event to the one
// URL of its options.
type forwarder struct {
	opts   listenOptions
	out    io.Writer
	stream *http.Client
	post   *http.Client
	lastID string
}

func newForwarder(o listenOptions, out io.Writer) *forwarder {
	return &forwarder{opts: o, out: out,
		stream: &http.Client{},
		// A redirect is not followed: the forwarder posts only to the URL
		// on its command line.
		post: &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
	}
}

// errTokenRefused ends the forwarder: retrying cannot help.
var errTokenRefused = errors.New("the server refused the token (401); log in again and pass the new one")

// run follows the stream until ctx ends, reconnecting (resuming after the
// last event seen) when the connection drops.
func (f *forwarder) run(ctx context.Context) error {
	backoff := time.Second
	for {
		err := f.follow(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, errTokenRefused) {
			return err
		}
		fmt.Fprintf(f.out, "stream interrupted (%v); reconnecting in %s\n", err, backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 30*time.Second)
	}
}

// follow reads one connection of the stream.
func (f *forwarder) follow(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.opts.server+"/api/fiat/me/events/stream", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+f.opts.token)
	req.Header.Set("Accept", "text/event-stream")
	if f.lastID != "" {
		req.Header.Set("Last-Event-ID", f.lastID)
	}
	resp, err := f.stream.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return errTokenRefused
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("the stream answered %d", resp.StatusCode)
	}
	fmt.Fprintln(f.out, "Connected to your event stream")
	if f.lastID == "" {
		// Nothing forwarded yet: resume from the moment of this first
		// connection, so events sent while a later reconnect backs off are
		// forwarded then. Event ids are time-ordered KSUIDs, and the server
		// resumes after an id it no longer holds by comparing ids.
		f.lastID = resumeMark(time.Now())
	}
	return readEvents(resp.Body, func(id, typ string, data []byte) {
		f.lastID = id
		if f.opts.events != nil && !f.opts.events[typ] {
			return
		}
		f.forward(ctx, id, typ, data)
	})
}

// readEvents parses server-sent events and calls each with its id, type and
// data; comments and retry fields are skipped.
func readEvents(r io.Reader, each func(id, typ string, data []byte)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var id, typ string
	var data bytes.Buffer
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if data.Len() > 0 {
				each(id, typ, bytes.Clone(data.Bytes()))
			}
			id, typ = "", ""
			data.Reset()
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			id = value
		case "event":
			typ = value
		case "data":
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(value)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.ErrUnexpectedEOF
}

// forward posts one event, signed, to the forward URL and prints the
// outcome.
func (f *forwarder) forward(ctx context.Context, id, typ string, body []byte) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.opts.forwardTo, bytes.NewReader(body))
	if err != nil {
		fmt.Fprintf(f.out, "%s %s: %v\n", typ, id, err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "platform-webhooks-listen/1")
	dispatch.Sign(req.Header, f.opts.secret, id, time.Now().Unix(), body)
	resp, err := f.post.Do(req)
	if err != nil {
		fmt.Fprintf(f.out, "%s %s --> %s: %v\n", typ, id, f.opts.forwardTo, err)
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	fmt.Fprintf(f.out, "%s %s --> %s [%d]\n", typ, id, f.opts.forwardTo, resp.StatusCode)
}

// resumeMark is the smallest KSUID of the second before at: every event
// created from then on sorts after it (a few from that second may be
// forwarded twice; webhooks are at least once, de-duplicated on the id).
func resumeMark(at time.Time) string {
	id, err := ksuid.FromParts(at.Add(-time.Second), make([]byte, 16))
	if err != nil {
		return ""
	}
	return id.String()
}
