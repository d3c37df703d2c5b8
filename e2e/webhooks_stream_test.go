package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/topics"
)

type sseEvent struct {
	id, event, data string
}

// openStream connects to the admin stream and delivers its messages on a
// channel until the test ends.
func openStream(t *testing.T, p *harness.Platform, token, lastID string) <-chan sseEvent {
	t.Helper()
	return openStreamAt(t, p, "/api/fiat/admin/events", token, lastID)
}

// openStreamAt connects to the stream at path (with the bearer token unless
// it is ""), and delivers its messages on a channel that is closed when the
// stream ends.
func openStreamAt(t *testing.T, p *harness.Platform, path, token, lastID string) <-chan sseEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.BaseURL+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("open stream: %v", err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	out := make(chan sseEvent, 100)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		r := bufio.NewReader(resp.Body)
		var ev sseEvent
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSuffix(line, "\n")
			switch {
			case line == "":
				if ev.id != "" {
					out <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				ev.data = line[6:]
			}
		}
	}()
	t.Cleanup(cancel)
	return out
}

// awaitIDs reads the stream until every id in want arrived and returns them
// by id.
func awaitIDs(t *testing.T, ch <-chan sseEvent, want ...string) map[string]sseEvent {
	t.Helper()
	got := map[string]sseEvent{}
	timeout := time.After(15 * time.Second)
	for len(got) < len(want) {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("stream ended; got %d of %d events", len(got), len(want))
			}
			for _, w := range want {
				if ev.id == w {
					got[w] = ev
				}
			}
		case <-timeout:
			t.Fatalf("timed out; got %d of %d events", len(got), len(want))
		}
	}
	return got
}

func TestWebhooksAdminStream(t *testing.T) {
	p := shared(t)
	admin := p.RegisterEmail(t, harness.FiatAdminEmail)
	u := p.Register(t, "streamed")

	live := openStream(t, p, admin.Token, "")
	first := produceEvent(t, p, topics.EventsFiat, "transfer.completed", u.ID, map[string]any{"txId": "tx-stream", "amountKzt": 5})
	ev := awaitIDs(t, live, first)[first]
	var payload map[string]any
	if err := json.Unmarshal([]byte(ev.data), &payload); err != nil {
		t.Fatalf("data is not JSON: %q", ev.data)
	}
	data, _ := payload["data"].(map[string]any)
	if ev.event != "transfer.completed" || payload["id"] != first || payload["type"] != "transfer.completed" ||
		payload["module"] != "fiat" || payload["sentAt"] == nil || data["txId"] != "tx-stream" {
		t.Fatalf("stream message %+v", ev)
	}

	// Events published while a client is away are replayed after its
	// Last-Event-ID when it comes back.
	missed := []string{
		produceEvent(t, p, topics.EventsMask, "mask.created", u.ID, map[string]any{"maskId": "m1"}),
		produceEvent(t, p, topics.EventsFiat, "deposit.completed", u.ID, map[string]any{"amount": 7}),
	}
	awaitIDs(t, live, missed...) // they reached the gateway's ring
	resumed := openStream(t, p, admin.Token, first)
	got := awaitIDs(t, resumed, missed...)
	if got[missed[0]].event != "mask.created" || !strings.Contains(got[missed[0]].data, `"module":"mask"`) {
		t.Fatalf("replayed %+v", got[missed[0]])
	}
}

// TestWebhooksAdminStreamPageInChromium loads the admin stream page in
// headless Chromium: a token in its URL fragment is not used; signing in
// with the admin's e-mail and password connects it, and it renders the
// stream's recent events.
func TestWebhooksAdminStreamPageInChromium(t *testing.T) {
	p := shared(t)
	admin := p.RegisterEmail(t, harness.FiatAdminEmail)
	u := p.Register(t, "browser")
	live := openStream(t, p, admin.Token, "")
	ids := []string{
		produceEvent(t, p, topics.EventsFiat, "transfer.completed", u.ID, map[string]any{"txId": "tx-browser-1"}),
		produceEvent(t, p, topics.EventsMask, "mask.created", u.ID, map[string]any{"maskId": "mask-browser-2"}),
	}
	awaitIDs(t, live, ids...) // in the gateway's ring, which the page's first connection replays

	ctx, _ := headlessBrowser(t, chromedp.WindowSize(1200, 800))
	step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// A token in the URL is not read (it would stay in the history and in
	// any link shared): the page loads, its script has run, and it has not
	// started to connect.
	step("open the page with #token=", chromedp.Navigate(p.BaseURL+"/api/fiat/admin/stream#token="+admin.Token),
		chromedp.WaitVisible("#login"))
	if connecting, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`running || document.getElementById("status").textContent !== "disconnected"`)); err != nil || connecting {
		t.Fatalf("the page used the token of its URL fragment (connecting %v, %v)", connecting, err)
	}
	// Signing in (the admin has no two-factor in development) connects and
	// renders the stream's recent events.
	step("sign in", chromedp.SendKeys(`input[name=email]`, admin.Email), chromedp.SendKeys(`input[name=password]`, admin.Password),
		chromedp.Click(`button[type=submit]`))
	want := append([]string{"tx-browser-1", "mask-browser-2", "mask.created"}, ids...)
	step("the stream's events rendered", chromedp.Poll[chromedp.Void](
		`document.getElementById("status").className === "live" && `+jsString(strings.Join(want, "|"))+
			`.split("|").every((w) => document.getElementById("rows").textContent.includes(w))`,
		chromedp.WithPollingTimeout(20*time.Second)))
}

// TestUserStreamsCapped: one user holds at most 5 open /me/events/stream
// connections; the 6th is 429 rate_limited with Retry-After, another user
// is not affected, and closing one frees its slot.
func TestUserStreamsCapped(t *testing.T) {
	p := shared(t)
	u, other := p.Register(t, "streams-cap"), p.Register(t, "streams-other")
	open := func(token string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, p.BaseURL+"/api/fiat/me/events/stream", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	var streams []*http.Response
	for i := range 5 {
		r := open(u.Token)
		if r.StatusCode != http.StatusOK {
			t.Fatalf("stream %d: %d", i+1, r.StatusCode)
		}
		streams = append(streams, r)
	}
	sixth := open(u.Token)
	if sixth.StatusCode == http.StatusOK {
		t.Fatal("a 6th stream of one user was opened, want 429 rate_limited")
	}
	body, _ := io.ReadAll(sixth.Body)
	if sixth.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), `"rate_limited"`) ||
		sixth.Header.Get("Retry-After") == "" {
		t.Fatalf("a 6th stream: %d %s (Retry-After %q), want 429 rate_limited", sixth.StatusCode, body, sixth.Header.Get("Retry-After"))
	}
	if r := open(other.Token); r.StatusCode != http.StatusOK {
		t.Fatalf("another user's stream: %d", r.StatusCode)
	}
	streams[0].Body.Close()
	// The server notices a client gone at its next write (a heartbeat).
	harness.Eventually(t, 90*time.Second, "a closed stream's slot freed", func() bool {
		r := open(u.Token)
		defer r.Body.Close()
		return r.StatusCode == http.StatusOK
	})
}
