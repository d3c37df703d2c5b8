package e2e

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// hookReceiver is a real HTTP endpoint on loopback that records every
// delivery and answers with the next status of its script (200 once the
// script is used up).
type hookReceiver struct {
	srv *httptest.Server

	mu     sync.Mutex
	script []int
	hits   []hookHit
	notify chan struct{}
	// firstDelay holds the answer to the first request back this long.
	firstDelay time.Duration
	// verifyWith, when set, is the secret each delivery's signatures are
	// verified with as it arrives (hookHit.signed): the signature's
	// timestamp window is 300 s, so a long run cannot verify afterwards.
	verifyWith string
}

type hookHit struct {
	at     time.Time
	header http.Header
	body   []byte
	status int
	// signed: the signatures verified at receipt (verifyWith).
	signed bool
}

func newHookReceiver(t *testing.T, script ...int) *hookReceiver {
	t.Helper()
	return newVerifyingHookReceiver(t, "", script...)
}

// newVerifyingHookReceiver is a hookReceiver that verifies each delivery's
// signatures with secret as it arrives (hookHit.signed).
func newVerifyingHookReceiver(t *testing.T, secret string, script ...int) *hookReceiver {
	t.Helper()
	r := &hookReceiver{script: script, notify: make(chan struct{}, 100), verifyWith: secret}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		if len(r.hits) == 0 && r.firstDelay > 0 {
			d := r.firstDelay
			r.mu.Unlock()
			select {
			case r.notify <- struct{}{}:
			default:
			}
			time.Sleep(d)
			r.mu.Lock()
		}
		status := http.StatusOK
		if len(r.script) > 0 {
			status, r.script = r.script[0], r.script[1:]
		}
		hit := hookHit{at: time.Now(), header: req.Header.Clone(), body: body, status: status}
		hit.signed = r.verifyWith != "" && verify(hit, r.verifyWith)
		r.hits = append(r.hits, hit)
		r.mu.Unlock()
		w.WriteHeader(status)
		select {
		case r.notify <- struct{}{}:
		default:
		}
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *hookReceiver) URL() string { return r.srv.URL + "/hook" }

func (r *hookReceiver) all() []hookHit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hookHit(nil), r.hits...)
}

// forEvent returns the deliveries of one event id.
func (r *hookReceiver) forEvent(id string) []hookHit {
	var out []hookHit
	for _, h := range r.all() {
		if h.header.Get("webhook-id") == id {
			out = append(out, h)
		}
	}
	return out
}

// verify checks a delivery's two signatures against secret the way a
// receiver would: X-Platform-Signature = sha256=hex(HMAC(secret, ts.body))
// and webhook-signature = v1,base64(HMAC(secret, id.ts.body)), the
// timestamps within 300 s.
func verify(h hookHit, secret string) bool {
	ts := h.header.Get("X-Platform-Timestamp")
	n, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(n, 0)).Abs() > 300*time.Second || h.header.Get("webhook-timestamp") != ts {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "."))
	mac.Write(h.body)
	spec := hmac.Equal([]byte(h.header.Get("X-Platform-Signature")), []byte("sha256="+hex.EncodeToString(mac.Sum(nil))))
	std := hmac.New(sha256.New, []byte(secret))
	std.Write([]byte(h.header.Get("webhook-id") + "." + ts + "."))
	std.Write(h.body)
	standard := hmac.Equal([]byte(h.header.Get("webhook-signature")), []byte("v1,"+base64.StdEncoding.EncodeToString(std.Sum(nil))))
	return spec && standard
}

func payloadOf(t *testing.T, h hookHit) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(h.body, &m); err != nil {
		t.Fatalf("delivery body is not JSON: %s", h.body)
	}
	return m
}

// produceEvent publishes an event envelope onto an events topic, as a
// module's outbox relay would, and returns its id.
func produceEvent(t *testing.T, p *harness.Platform, topic, typ, actor string, data any) string {
	t.Helper()
	env, err := schemas.New(typ, actor, actor, data, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	rec, err := topics.Record(topic, env)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.KafkaAddr))
	if err != nil {
		t.Fatalf("kafka client: %v", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		t.Fatalf("produce %s: %v", typ, err)
	}
	return env.ID
}

type subscription struct {
	ID        string    `json:"id"`
	URL       string    `json:"url"`
	Events    []string  `json:"events"`
	CreatedAt time.Time `json:"createdAt"`
}

func subscribeWebhook(t *testing.T, p *harness.Platform, u harness.User, url, secret string, events []string) subscription {
	t.Helper()
	body := map[string]any{"url": url, "secret": secret, "password": u.Password}
	if events != nil {
		body["events"] = events
	}
	r := p.Post(t, "/api/fiat/me/webhook", u.Token, body)
	if r.Status != http.StatusCreated && r.Status != http.StatusOK {
		t.Fatalf("subscribe: %d %s", r.Status, r.Body)
	}
	var s subscription
	r.Decode(t, &s)
	return s
}

type deliveryRow struct {
	ID             string  `json:"id"`
	WebhookID      string  `json:"webhookId"`
	EventID        string  `json:"eventId"`
	Type           string  `json:"type"`
	Status         string  `json:"status"`
	Attempts       int     `json:"attempts"`
	LastStatusCode *int    `json:"lastStatusCode"`
	LastError      *string `json:"lastError"`
	NextAttemptAt  *string `json:"nextAttemptAt"`
	CreatedAt      string  `json:"createdAt"`
}

// deliveriesOf lists a subscription's deliveries through the admin API.
func deliveriesOf(t *testing.T, p *harness.Platform, admin harness.User, webhookID string) []deliveryRow {
	t.Helper()
	r := p.Get(t, "/api/fiat/admin/webhook-deliveries?limit=200&webhookId="+webhookID, admin.Token)
	if r.Status != http.StatusOK {
		t.Fatalf("deliveries: %d %s", r.Status, r.Body)
	}
	var page struct {
		Items []deliveryRow `json:"items"`
	}
	r.Decode(t, &page)
	return page.Items
}

func deliveryOf(t *testing.T, p *harness.Platform, admin harness.User, webhookID, eventID string) (deliveryRow, bool) {
	t.Helper()
	for _, d := range deliveriesOf(t, p, admin, webhookID) {
		if d.EventID == eventID {
			return d, true
		}
	}
	return deliveryRow{}, false
}
