package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/topics"
)

const (
	hookSecret  = "whsec-test-0123456789abcdef"
	hookSecret2 = "whsec-rotated-0123456789abcdef"
)

func TestWebhooksSubscriptionAPI(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "hooks")
	rcv := newHookReceiver(t)

	if r := p.Post(t, "/api/fiat/me/webhook", "", map[string]any{"url": rcv.URL(), "secret": hookSecret}); r.Status != http.StatusUnauthorized {
		t.Fatalf("without a token: %d %s", r.Status, r.Body)
	}
	bad := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"not http(s)", map[string]any{"url": "ftp://127.0.0.1/x", "secret": hookSecret, "password": u.Password}, "url"},
		{"no url", map[string]any{"secret": hookSecret, "password": u.Password}, "url"},
		{"short secret", map[string]any{"url": rcv.URL(), "secret": "fifteen-chars-x", "password": u.Password}, "secret"},
		{"unknown event", map[string]any{"url": rcv.URL(), "secret": hookSecret, "password": u.Password, "events": []string{"transfer.completed", "money.printed"}}, "events"},
		{"empty event list", map[string]any{"url": rcv.URL(), "secret": hookSecret, "password": u.Password, "events": []string{}}, "events"},
		{"events not an array", map[string]any{"url": rcv.URL(), "secret": hookSecret, "password": u.Password, "events": "transfer.completed"}, "events"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			r := p.Post(t, "/api/fiat/me/webhook", u.Token, tt.body)
			body := r.JSON(t)
			fields, _ := body["fields"].(map[string]any)
			if r.Status != http.StatusUnprocessableEntity || body["error"] != "validation_failed" || fields[tt.field] == nil {
				t.Fatalf("got %d %s", r.Status, r.Body)
			}
		})
	}

	r := p.Post(t, "/api/fiat/me/webhook", u.Token, map[string]any{"password": u.Password, "url": rcv.URL(), "secret": hookSecret})
	if r.Status != http.StatusCreated || strings.Contains(string(r.Body), hookSecret) {
		t.Fatalf("first subscription: %d %s", r.Status, r.Body)
	}
	first := r.JSON(t)
	if first["id"] == "" || first["url"] != rcv.URL() || first["events"] != nil || first["createdAt"] == nil || first["secret"] != nil {
		t.Fatalf("first subscription body %v", first)
	}
	r = p.Post(t, "/api/fiat/me/webhook", u.Token, map[string]any{"password": u.Password, "url": rcv.URL() + "2", "secret": hookSecret,
		"events": []string{"transfer.completed", "transfer.completed", "deposit.completed"}})
	second := r.JSON(t)
	if r.Status != http.StatusOK || second["id"] != first["id"] || second["url"] != rcv.URL()+"2" ||
		fmt.Sprint(second["events"]) != "[transfer.completed deposit.completed]" {
		t.Fatalf("replacement: %d %s", r.Status, r.Body)
	}

	patch := func(token string, body any) harness.Response {
		return p.Do(t, harness.Request{Method: http.MethodPatch, Path: "/api/fiat/me/webhook", Token: token, Body: body})
	}
	if r := patch(u.Token, map[string]any{"secret": hookSecret2}); r.Status != http.StatusOK || r.JSON(t)["id"] != first["id"] ||
		strings.Contains(string(r.Body), hookSecret2) {
		t.Fatalf("rotate: %d %s", r.Status, r.Body)
	}
	if r := patch(u.Token, map[string]any{"secret": "short"}); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("rotate to a short secret: %d %s", r.Status, r.Body)
	}
	stranger := p.Register(t, "nohook")
	if r := patch(stranger.Token, map[string]any{"secret": hookSecret2}); r.Status != http.StatusNotFound || r.JSON(t)["error"] != "not_found" {
		t.Fatalf("rotate without a subscription: %d %s", r.Status, r.Body)
	}

	r = p.Post(t, "/api/fiat/webhook-subs", u.Token, map[string]any{"password": u.Password, "url": rcv.URL() + "3", "secret": hookSecret})
	if r.Status != http.StatusCreated || r.JSON(t)["id"] == first["id"] {
		t.Fatalf("webhook-subs: %d %s", r.Status, r.Body)
	}
	extra := r.JSON(t)["id"].(string)
	if r := patch(u.Token, map[string]any{"secret": hookSecret2, "id": extra}); r.Status != http.StatusOK || r.JSON(t)["id"] != extra {
		t.Fatalf("rotate a webhook-subs subscription: %d %s", r.Status, r.Body)
	}
	if r := patch(stranger.Token, map[string]any{"secret": hookSecret2, "id": extra}); r.Status != http.StatusNotFound {
		t.Fatalf("rotate another user's subscription: %d %s", r.Status, r.Body)
	}

	// Admin routes refuse ordinary users and answer admins.
	for _, req := range []harness.Request{
		{Method: http.MethodGet, Path: "/api/fiat/admin/webhook-deliveries"},
		{Method: http.MethodPost, Path: "/api/fiat/admin/webhook-deliveries/x/retry"},
		{Method: http.MethodGet, Path: "/api/fiat/admin/events"},
	} {
		req.Token = u.Token
		if r := p.Do(t, req); r.Status != http.StatusForbidden || r.JSON(t)["error"] != "forbidden" {
			t.Fatalf("%s %s as a user: %d %s", req.Method, req.Path, r.Status, r.Body)
		}
	}
	admin := p.RegisterEmail(t, harness.FiatAdminEmail)
	if r := p.Post(t, "/api/fiat/admin/webhook-deliveries/nope/retry", admin.Token, nil); r.Status != http.StatusNotFound {
		t.Fatalf("retry unknown delivery: %d %s", r.Status, r.Body)
	}
	if r := p.Get(t, "/api/fiat/admin/webhook-deliveries?status=lost", admin.Token); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("bad status filter: %d %s", r.Status, r.Body)
	}
	if r := p.Get(t, "/api/fiat/admin/webhook-deliveries?webhookId="+extra, admin.Token); r.Status != http.StatusOK ||
		string(r.Body) != `{"items":[],"nextCursor":null}` {
		t.Fatalf("empty log: %d %s", r.Status, r.Body)
	}
	if r := p.Get(t, "/api/fiat/admin/stream", ""); r.Status != http.StatusOK ||
		!strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(r.Body), "/api/fiat/admin/events") {
		t.Fatalf("stream page: %d %s", r.Status, r.Header)
	}
}

// TestWebhooksDelivery runs one platform with a short retry schedule
// (0s,200ms,200ms,200ms,200ms) and real receivers on loopback.
func TestWebhooksDelivery(t *testing.T) {
	p := harness.Start(t, harness.Options{Env: map[string]string{
		"WEBHOOK_RETRY_SCHEDULE": "0s,200ms,200ms,200ms,200ms",
	}})
	admin := p.RegisterEmail(t, harness.FiatAdminEmail)
	// A transfer.completed earns its actor a score.updated event too (the
	// reputation applier derives it): the endpoints whose receivers script
	// their answers take transfer.completed only, so that each attempt they
	// count is the transfer's.
	onlyTransfers := []string{"transfer.completed"}
	transfer := func(actor string) string {
		return produceEvent(t, p, topics.EventsFiat, "transfer.completed", actor, map[string]any{
			"txId": "tx-" + actor, "fromWallet": "w-none", "toWallet": "w-none2", "amountKzt": 1000, "feeKzt": 1, "description": "e2e"})
	}
	waitStatus := func(t *testing.T, sub, event, status string) deliveryRow {
		t.Helper()
		var d deliveryRow
		harness.Eventually(t, 20*time.Second, "delivery "+status, func() bool {
			var ok bool
			d, ok = deliveryOf(t, p, admin, sub, event)
			return ok && d.Status == status
		})
		return d
	}

	t.Run("an event of the owner arrives signed; others' do not", func(t *testing.T) {
		alice, bob := p.Register(t, "alice"), p.Register(t, "bob")
		rcv := newHookReceiver(t)
		sub := subscribeWebhook(t, p, alice, rcv.URL(), hookSecret, nil)
		bobs := transfer(bob.ID)
		mine := transfer(alice.ID)
		d := waitStatus(t, sub.ID, mine, "delivered")
		if d.Attempts != 1 || d.LastStatusCode == nil || *d.LastStatusCode != 200 || d.Type != "transfer.completed" ||
			d.WebhookID != sub.ID || d.NextAttemptAt != nil || d.LastError != nil {
			t.Fatalf("delivery row %+v", d)
		}
		hits := rcv.forEvent(mine)
		if len(hits) != 1 || !verify(hits[0], hookSecret) || verify(hits[0], hookSecret2) {
			t.Fatalf("%d deliveries of the event; signature valid: %v", len(hits), len(hits) == 1 && verify(hits[0], hookSecret))
		}
		body := payloadOf(t, hits[0])
		data, _ := body["data"].(map[string]any)
		if body["id"] != mine || body["type"] != "transfer.completed" || body["module"] != "fiat" || body["sentAt"] == nil ||
			data["txId"] != "tx-"+alice.ID || data["amountKzt"] != float64(1000) {
			t.Fatalf("payload %s", hits[0].body)
		}
		time.Sleep(500 * time.Millisecond)
		if len(rcv.forEvent(bobs)) != 0 {
			t.Fatalf("bob's event reached alice's endpoint")
		}
	})

	t.Run("four failures, then the fifth attempt succeeds", func(t *testing.T) {
		u := p.Register(t, "flaky")
		rcv := newHookReceiver(t, 500, 502, 503, 404)
		sub := subscribeWebhook(t, p, u, rcv.URL(), hookSecret, onlyTransfers)
		ev := transfer(u.ID)
		d := waitStatus(t, sub.ID, ev, "delivered")
		if d.Attempts != 5 || *d.LastStatusCode != 200 {
			t.Fatalf("delivery %+v", d)
		}
		hits := rcv.forEvent(ev)
		if len(hits) != 5 {
			t.Fatalf("%d attempts reached the receiver, want 5", len(hits))
		}
		for i, h := range hits {
			if !verify(h, hookSecret) || payloadOf(t, h)["id"] != ev {
				t.Fatalf("attempt %d not verifiable or another id", i+1)
			}
			if i > 0 && h.at.Sub(hits[i-1].at) < 180*time.Millisecond {
				t.Fatalf("attempt %d came %s after the previous, before the 200ms schedule", i+1, h.at.Sub(hits[i-1].at))
			}
		}
	})

	t.Run("five failures dead-letter; rotation then admin retry delivers with the new secret", func(t *testing.T) {
		u := p.Register(t, "dead")
		rcv := newHookReceiver(t, 500, 500, 500, 500, 500)
		sub := subscribeWebhook(t, p, u, rcv.URL(), hookSecret, onlyTransfers)
		ev := transfer(u.ID)
		d := waitStatus(t, sub.ID, ev, "dead_letter")
		if d.Attempts != 5 || *d.LastStatusCode != 500 || d.NextAttemptAt != nil || d.LastError == nil {
			t.Fatalf("dead letter %+v", d)
		}
		if n := len(rcv.forEvent(ev)); n != 5 {
			t.Fatalf("%d attempts, want 5", n)
		}
		// Rotate, cutting the old secret at once (expiresIn 0; the overlap is
		// TestWebhookRotationOverlap's): from now on only the new secret
		// signs, this pending retry included.
		if r := p.Do(t, harness.Request{Method: http.MethodPatch, Path: "/api/fiat/me/webhook", Token: u.Token,
			Body: map[string]any{"secret": hookSecret2, "expiresIn": 0}}); r.Status != http.StatusOK {
			t.Fatalf("rotate: %d %s", r.Status, r.Body)
		}
		r := p.Post(t, "/api/fiat/admin/webhook-deliveries/"+d.ID+"/retry", admin.Token, nil)
		if r.Status != http.StatusAccepted || r.JSON(t)["status"] != "pending" {
			t.Fatalf("retry: %d %s", r.Status, r.Body)
		}
		d = waitStatus(t, sub.ID, ev, "delivered")
		hits := rcv.forEvent(ev)
		last := hits[len(hits)-1]
		if d.Attempts != 6 || len(hits) != 6 || !verify(last, hookSecret2) || verify(last, hookSecret) {
			t.Fatalf("after retry: %+v, %d hits, new secret verifies: %v", d, len(hits), verify(last, hookSecret2))
		}
		// A later event also verifies only with the new secret.
		ev2 := transfer(u.ID)
		waitStatus(t, sub.ID, ev2, "delivered")
		if h := rcv.forEvent(ev2); len(h) != 1 || !verify(h[0], hookSecret2) || verify(h[0], hookSecret) {
			t.Fatalf("next delivery after rotation not signed with only the new secret")
		}
	})

	t.Run("event lists filter; fiat admins receive everyone's events", func(t *testing.T) {
		u := p.Register(t, "lists")
		onlyFailed := newHookReceiver(t)
		adminRcv := newHookReceiver(t)
		subscribeWebhook(t, p, u, onlyFailed.URL(), hookSecret, []string{"transfer.failed"})
		adminSub := subscribeWebhook(t, p, admin, adminRcv.URL(), hookSecret, nil)
		ev := transfer(u.ID)
		waitStatus(t, adminSub.ID, ev, "delivered")
		if h := adminRcv.forEvent(ev); len(h) != 1 || !verify(h[0], hookSecret) {
			t.Fatalf("admin endpoint got %d deliveries of the user's event", len(h))
		}
		failed := produceEvent(t, p, topics.EventsFiat, "transfer.failed", u.ID, map[string]any{"reason": "insufficient_balance"})
		harness.Eventually(t, 10*time.Second, "transfer.failed delivery", func() bool { return len(onlyFailed.forEvent(failed)) == 1 })
		if n := len(onlyFailed.forEvent(ev)); n != 0 {
			t.Fatalf("a transfer.failed-only endpoint got transfer.completed")
		}
	})

	t.Run("restarted mid-schedule, the due retry goes out after start", func(t *testing.T) {
		u := p.Register(t, "restart")
		rcv := newHookReceiver(t, 500) // first attempt fails, slowly
		rcv.firstDelay = time.Second
		sub := subscribeWebhook(t, p, u, rcv.URL(), hookSecret, onlyTransfers)
		ev := transfer(u.ID)
		select {
		case <-rcv.notify:
		case <-time.After(15 * time.Second):
			t.Fatal("first attempt never came")
		}
		// Stop while the first attempt is in flight: shutdown records it
		// (failed, next attempt 200ms later), which falls due while down.
		p.Stop()
		time.Sleep(500 * time.Millisecond)
		restarted := time.Now()
		p.Restart()
		d := waitStatus(t, sub.ID, ev, "delivered")
		hits := rcv.forEvent(ev)
		if d.Attempts != 2 || len(hits) != 2 || hits[1].at.Before(restarted) || !verify(hits[1], hookSecret) {
			t.Fatalf("after restart: %+v, %d hits", d, len(hits))
		}
	})
}
