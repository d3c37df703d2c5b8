package webhooks_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/auth/authtest"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	gwebhooks "github.com/fintech/platform/gateway/webhooks"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/identity"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/storage/sealed"
	store "github.com/fintech/platform/storage/webhooks"
)

type streamFixture struct {
	base   string
	hub    *gwebhooks.Hub
	admin  string // token of a fiat admin
	user   string // token of anyone else
	client *http.Client
	store  *store.Store
	// skew moves the handlers' clock (nanoseconds ahead of time.Now).
	skew *atomic.Int64
}

func newStreamFixture(t *testing.T) streamFixture {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	pool, _ := pgtest.NewDB(t)
	tokens := authtest.New(t)
	hub, err := gwebhooks.NewHub(gwebhooks.HubConfig{}, nil, nil, log, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	// The admin is a verified, operator-confirmed account on the allowlist,
	// as the guard reads it from the database.
	if _, err := pool.Exec(context.Background(), `INSERT INTO users (id, email, password_hash, email_verified_at, role_confirmed_at)
VALUES ('u-admin', 'boss@example.com', 'x', now(), now()), ('u-user', 'someone@example.com', 'x', now(), NULL)`); err != nil {
		t.Fatal(err)
	}
	allow := auth.ParseAllowlist("boss@example.com")
	vault, err := sealed.NewKeyring("TEST_KEY", "data", "test-data-key-0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	guard, err := auth.NewGuard(identity.NewUsers(pool), auth.Admins{Fiat: allow})
	if err != nil {
		t.Fatal(err)
	}
	skew := &atomic.Int64{}
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	st := store.NewStore(pool)
	h, err := gwebhooks.NewHandlers(st, hub, nobody{}, noWake{}, tokens.Authenticator, guard.Require(allow), vault, now,
		gwebhooks.Config{Heartbeat: 100 * time.Millisecond, Reauth: admitAll{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(ratelimit.New(ratelimit.Limits{}, time.Now), prometheus.NewRegistry(), log)
	if err := h.Register(srv.Root()); err != nil {
		t.Fatal(err)
	}
	srv.Finish()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.App.Listener(ln) }()
	t.Cleanup(func() { _ = srv.App.ShutdownWithTimeout(5 * time.Second) })
	admin := tokens.Login(t, "u-admin", "boss@example.com")
	user := tokens.Login(t, "u-user", "someone@example.com")
	return streamFixture{base: "http://" + ln.Addr().String(), hub: hub, admin: admin, user: user, client: &http.Client{},
		store: st, skew: skew}
}

type noWake struct{}

func (noWake) Wake() {}

// open starts a stream; the caller reads frames from the returned reader.
func (f streamFixture) open(t *testing.T, path string, headers map[string]string) (*http.Response, *bufio.Reader, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.base+path, nil)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	return resp, bufio.NewReader(resp.Body), cancel
}

// frame reads one SSE block (up to a blank line).
func frame(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	var b strings.Builder
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("read stream: %v (so far %q)", err, b.String())
		}
		if line == "\n" {
			return b.String()
		}
		b.WriteString(line)
	}
}

func msg(id string) gwebhooks.Message {
	return gwebhooks.Message{ID: id, Type: "transfer.completed", Payload: []byte(`{"data":{},"id":"` + id + `","module":"fiat","sentAt":"2026-01-01T00:00:00.000Z","type":"transfer.completed"}`)}
}

func TestStreamFramesResumeAndHeartbeat(t *testing.T) {
	f := newStreamFixture(t)
	f.hub.Publish(msg("e1"))
	f.hub.Publish(msg("e2"))

	resp, r, cancel := f.open(t, "/api/fiat/admin/events", map[string]string{"Authorization": "Bearer " + f.admin, "Last-Event-ID": "e1"})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream answered %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if got := frame(t, r); got != "retry: 3000\n: connected\n" {
		t.Fatalf("preamble %q", got)
	}
	want := "id: e2\nevent: transfer.completed\ndata: " + string(msg("e2").Payload) + "\n"
	if got := frame(t, r); got != want {
		t.Fatalf("resumed frame\n got %q\nwant %q", got, want)
	}
	if got := frame(t, r); got != ": heartbeat\n" {
		t.Fatalf("expected a heartbeat, got %q", got)
	}
	f.hub.Publish(msg("e3"))
	for {
		got := frame(t, r)
		if got == ": heartbeat\n" {
			continue
		}
		if !strings.HasPrefix(got, "id: e3\nevent: transfer.completed\ndata: {") {
			t.Fatalf("live frame %q", got)
		}
		break
	}
	// A client that goes away is noticed by the next write and unsubscribed.
	cancel()
	deadline := time.Now().Add(2 * time.Second)
	for f.hub.Listeners() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d listeners left after the client disconnected", f.hub.Listeners())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestStreamAuth(t *testing.T) {
	f := newStreamFixture(t)
	tests := []struct {
		name    string
		path    string
		headers map[string]string
		status  int
	}{
		{"no token", "/api/fiat/admin/events", nil, http.StatusUnauthorized},
		{"not an admin", "/api/fiat/admin/events", map[string]string{"Authorization": "Bearer " + f.user}, http.StatusForbidden},
		{"admin token in the URL is refused", "/api/fiat/admin/events?access_token=" + f.admin, nil, http.StatusUnauthorized},
		{"a token in the URL is refused beside the header", "/api/fiat/admin/events?access_token=" + f.admin,
			map[string]string{"Authorization": "Bearer " + f.admin}, http.StatusUnauthorized},
		{"a forged ticket", "/api/fiat/admin/events?ticket=forged", nil, http.StatusUnauthorized},
		{"the page needs no token", "/api/fiat/admin/stream", nil, http.StatusOK},
		{"bad recent", "/api/fiat/admin/events?recent=-1", map[string]string{"Authorization": "Bearer " + f.admin},
			http.StatusUnprocessableEntity},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, _, cancel := f.open(t, tt.path, tt.headers)
			defer cancel()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
		})
	}
}

func TestStreamRecent(t *testing.T) {
	f := newStreamFixture(t)
	for _, id := range []string{"e1", "e2", "e3"} {
		f.hub.Publish(msg(id))
	}
	_, r, _ := f.open(t, "/api/fiat/admin/events?recent=2", map[string]string{"Authorization": "Bearer " + f.admin})
	frame(t, r) // preamble
	for _, want := range []string{"e2", "e3"} {
		if got := frame(t, r); !strings.HasPrefix(got, "id: "+want+"\n") {
			t.Fatalf("frame %q, want id %s", got, want)
		}
	}
}

// mint asks for a stream ticket with token and returns the answer.
func (f streamFixture) mint(t *testing.T, token string) (int, schemas.StreamTicket) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.base+"/api/fiat/admin/events/ticket", strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out schemas.StreamTicket
	if resp.StatusCode == http.StatusCreated {
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, out
}

// TestStreamTickets: a ticket opens the stream once, within its minute, for
// the fiat admin it was minted for; others cannot mint one, and a ticket of
// an account that is not (or no longer) an admin opens nothing.
func TestStreamTickets(t *testing.T) {
	f := newStreamFixture(t)
	status, tk := f.mint(t, f.admin)
	if status != http.StatusCreated || len(tk.Ticket) < 40 {
		t.Fatalf("mint: %d %+v", status, tk)
	}
	if exp, err := time.Parse(time.RFC3339, tk.ExpiresAt); err != nil || time.Until(exp) > gwebhooks.TicketTTL+time.Second {
		t.Fatalf("expiresAt %q", tk.ExpiresAt)
	}
	resp, r, cancel := f.open(t, "/api/fiat/admin/events?ticket="+tk.Ticket, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("first use: %d", resp.StatusCode)
	}
	if got := frame(t, r); got != "retry: 3000\n: connected\n" {
		t.Fatalf("preamble %q", got)
	}
	cancel()
	if again, _, c := f.open(t, "/api/fiat/admin/events?ticket="+tk.Ticket, nil); again.StatusCode != http.StatusUnauthorized {
		c()
		t.Fatalf("second use: %d, want 401", again.StatusCode)
	}

	t.Run("expires after a minute", func(t *testing.T) {
		_, old := f.mint(t, f.admin)
		f.skew.Store(int64(gwebhooks.TicketTTL + time.Second))
		defer f.skew.Store(0)
		resp, _, c := f.open(t, "/api/fiat/admin/events?ticket="+old.Ticket, nil)
		defer c()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("expired ticket: %d, want 401", resp.StatusCode)
		}
	})
	t.Run("bound to an admin", func(t *testing.T) {
		if status, _ := f.mint(t, f.user); status != http.StatusForbidden {
			t.Fatalf("a non-admin minted a ticket: %d", status)
		}
		if status, _ := f.mint(t, ""); status != http.StatusUnauthorized {
			t.Fatalf("minted without a token: %d", status)
		}
		// A ticket stands for its user (and the live session that minted
		// it), whose rights are checked when it is used: one held by an
		// account off the allowlist opens nothing.
		const raw = "ticket-of-a-plain-user-0123456789abcdef"
		sum := sha256.Sum256([]byte(raw))
		now := time.Now()
		if err := f.store.CreateStreamTicket(context.Background(), hex.EncodeToString(sum[:]), "u-user", authtest.SessionOf("u-user"), now.Add(time.Minute), now); err != nil {
			t.Fatal(err)
		}
		resp, _, c := f.open(t, "/api/fiat/admin/events?ticket="+raw, nil)
		defer c()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("a plain user's ticket: %d, want 403", resp.StatusCode)
		}
	})
}

// nobody is an audience no event is about: the admin stream does not use it.
type nobody struct{}

func (nobody) Users(context.Context, *kgo.Record) ([]string, error) { return nil, nil }

// admitAll admits every re-authentication and mails nothing.
type admitAll struct{}

func (admitAll) Reauthenticate(*fiber.Ctx, string, string, string) error { return nil }
func (admitAll) Notify(context.Context, string, string)                  {}
