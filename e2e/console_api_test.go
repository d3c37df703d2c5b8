package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// consoleRoutes are every data call the admin console makes: its own routes
// and the fiat admin routes it reuses.
var consoleRoutes = []struct{ method, path string }{
	{http.MethodGet, "/api/platform/admin/throughput"},
	{http.MethodGet, "/api/platform/admin/events"},
	{http.MethodGet, "/api/platform/admin/lag"},
	{http.MethodGet, "/api/platform/admin/parked"},
	{http.MethodGet, "/api/platform/admin/deliveries"},
	{http.MethodGet, "/api/platform/admin/audit"},
	{http.MethodGet, "/api/platform/admin/slow-requests"},
	{http.MethodGet, "/api/platform/admin/dlq"},
	{http.MethodGet, "/api/platform/admin/dlq?topic=fiat.commands"},
	{http.MethodPost, "/api/platform/admin/dlq/fiat.commands.dlq:0:0/replay"},
	{http.MethodPost, "/api/platform/admin/dlq/fiat.commands.dlq:0:0/discard"},
	{http.MethodGet, "/api/fiat/admin/reconcile"},
	{http.MethodGet, "/api/fiat/admin/deposits?status=needs_review"},
	{http.MethodPost, "/api/fiat/admin/deposits/" + "2Bvx6cP7ZL9nQYQw1AbUeS0pJkd" + "/refund"},
	{http.MethodGet, "/api/fiat/admin/webhook-deliveries?status=dead_letter"},
	{http.MethodPost, "/api/fiat/admin/webhook-deliveries/" + "2Bvx6cP7ZL9nQYQw1AbUeS0pJkd" + "/retry"},
}

// TestConsoleAccess walks every console data call: 401 without a token,
// 403 for a signed-in user who is not a fiat admin (also an admin of
// another module), and for the admin an answer to every read.
func TestConsoleAccess(t *testing.T) {
	p := shared(t)
	user := p.Register(t, "console-user")
	govAdmin := p.RegisterEmail(t, harness.GovAdminEmail)
	admin := p.RegisterEmail(t, harness.FiatAdminEmail)
	for _, r := range consoleRoutes {
		call := func(token string) harness.Response {
			req := harness.Request{Method: r.method, Path: r.path, Token: token}
			if r.method == http.MethodPost {
				req.Body = map[string]any{}
			}
			return p.Do(t, req)
		}
		if got := call(""); got.Status != http.StatusUnauthorized {
			t.Errorf("%s %s without a token: %d %s, want 401", r.method, r.path, got.Status, got.Body)
		}
		for _, u := range []harness.User{user, govAdmin} {
			if got := call(u.Token); got.Status != http.StatusForbidden || !strings.Contains(string(got.Body), schemas.CodeForbidden) {
				t.Errorf("%s %s as %s: %d %s, want 403 forbidden", r.method, r.path, u.Email, got.Status, got.Body)
			}
		}
		if r.method == http.MethodGet {
			if got := call(admin.Token); got.Status != http.StatusOK {
				t.Errorf("%s %s as the fiat admin: %d %s", r.method, r.path, got.Status, got.Body)
			}
		}
	}
	page := p.Get(t, "/admin", "")
	csp := page.Header.Get("Content-Security-Policy")
	if page.Status != http.StatusOK || !strings.Contains(csp, "script-src 'nonce-") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("/admin: %d, CSP %q", page.Status, csp)
	}
	if strings.Contains(string(page.Body), "https://") {
		t.Errorf("/admin loads something from elsewhere")
	}
}

// TestConsoleDLQ parks a command of a type this build cannot read on
// fiat.commands.dlq, lists it, replays it (it comes back, parked again:
// the replay reached its source topic with the same command id, and the
// new record names the one it replays, in the API and in `platform dlq
// show`), refuses to discard the replayed record, discards the new one,
// pages through the list, and finds both decisions in the dead letters'
// audit log (dlq_audit, not the fiat one); unknown ids are 404.
func TestConsoleDLQ(t *testing.T) {
	p := shared(t)
	admin := p.RegisterEmail(t, harness.FiatAdminEmail)
	key := "console-dlq-" + strings.ToLower(harness.NewID())
	cmdID := harness.NewID()
	value, err := json.Marshal(map[string]any{"id": cmdID, "type": "fiat.future_command", "schemaVersion": 1,
		"occurredAt": time.Now().UTC(), "key": key, "data": map[string]any{"memo": "<b>not markup</b>"}})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.KafkaAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, topics.RawRecord(topics.FiatCommands, key, "fiat.future_command", cmdID, value)).FirstErr(); err != nil {
		t.Fatal(err)
	}

	mine := func() []schemas.DLQRecord {
		t.Helper()
		var out []schemas.DLQRecord
		cursor := ""
		for {
			r := p.Get(t, "/api/platform/admin/dlq?topic=fiat.commands&limit=1"+cursor, admin.Token)
			if r.Status != http.StatusOK {
				t.Fatalf("list dlq: %d %s", r.Status, r.Body)
			}
			var page schemas.Page[schemas.DLQRecord]
			r.Decode(t, &page)
			for _, rec := range page.Items {
				if rec.Key == key {
					out = append(out, rec)
				}
			}
			if page.NextCursor == nil {
				return out
			}
			cursor = "&cursor=" + url.QueryEscape(*page.NextCursor)
		}
	}
	var parked []schemas.DLQRecord
	harness.Eventually(t, 15*time.Second, "the command parked", func() bool { parked = mine(); return len(parked) == 1 })
	first := parked[0]
	if first.CommandID != cmdID || first.Type != "fiat.future_command" || first.SourceTopic != topics.FiatCommands ||
		first.Topic != "fiat.commands.dlq" || first.State != schemas.DLQStateParked || !strings.Contains(first.Error, "unknown") ||
		time.Since(first.FirstSeenAt) > time.Minute {
		t.Fatalf("parked record %+v", first)
	}

	replay := p.Post(t, "/api/platform/admin/dlq/"+first.ID+"/replay", admin.Token, map[string]any{})
	var replayed schemas.DLQRecord
	if replay.Status != http.StatusOK {
		t.Fatalf("replay: %d %s", replay.Status, replay.Body)
	}
	replay.Decode(t, &replayed)
	if replayed.State != schemas.DLQStateReplayed || replayed.Replays != 1 || !strings.HasPrefix(replayed.DecidedBy, "admin:") {
		t.Fatalf("replayed record %+v", replayed)
	}
	// This build still cannot read the type, so the replayed command is
	// parked again: proof it went back to fiat.commands with its id.
	harness.Eventually(t, 15*time.Second, "the replayed command parked again", func() bool { parked = mine(); return len(parked) == 2 })
	second := parked[1]
	if parked[0].State != schemas.DLQStateReplayed || second.CommandID != cmdID || second.State != schemas.DLQStateParked || second.Offset <= first.Offset ||
		second.ReplayOf != first.ID || parked[0].ReplayOf != "" {
		t.Fatalf("after the replay: %+v, want the second naming %s", parked, first.ID)
	}
	if r := p.Post(t, "/api/platform/admin/dlq/"+first.ID+"/discard", admin.Token, map[string]any{}); r.Status != http.StatusConflict ||
		r.JSON(t)["error"] != schemas.CodeInvalidState {
		t.Errorf("discard a replayed record: %d %s, want 409 invalid_state", r.Status, r.Body)
	}
	if r := p.Post(t, "/api/platform/admin/dlq/"+second.ID+"/discard", admin.Token, map[string]any{}); r.Status != http.StatusOK ||
		r.JSON(t)["state"] != schemas.DLQStateDiscarded {
		t.Errorf("discard: %d %s", r.Status, r.Body)
	}
	for _, id := range []string{"fiat.commands.dlq:0:999999999", "fiat.commands.dlq:5:0", "events.nope.dlq:0:0", "nonsense", "fiat.commands.dlq:0:-1"} {
		if r := p.Post(t, "/api/platform/admin/dlq/"+url.PathEscape(id)+"/replay", admin.Token, map[string]any{}); r.Status != http.StatusNotFound {
			t.Errorf("replay %q: %d %s, want 404", id, r.Status, r.Body)
		}
	}
	if r := p.Get(t, "/api/platform/admin/dlq?topic=nope", admin.Token); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("list of an unknown topic: %d %s, want 422", r.Status, r.Body)
	}

	dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer dcancel()
	pool, err := pgxpool.New(dctx, p.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	got := map[string]string{}
	rows, err := pool.Query(dctx, `SELECT record_id || ' ' || action, actor FROM dlq_audit WHERE record_id = ANY($1)
		UNION ALL SELECT subject || ' ' || action || ' (in fiat_audit)', actor FROM fiat_audit WHERE subject = ANY($1)`, []string{first.ID, second.ID})
	if err != nil {
		t.Fatal(err)
	}
	var what, who string
	if _, err := pgx.ForEachRow(rows, []any{&what, &who}, func() error { got[what] = who; return nil }); err != nil {
		t.Fatal(err)
	}
	if got[first.ID+" dlq.replay"] != "admin:"+admin.ID || got[second.ID+" dlq.discard"] != "admin:"+admin.ID || len(got) != 2 {
		t.Errorf("audit entries of the decisions: %v", got)
	}
	var detail schemas.DLQRecordDetail
	if r := p.Get(t, "/api/platform/admin/dlq/"+first.ID, admin.Token); r.Status != http.StatusOK {
		t.Errorf("show %s: %d %s", first.ID, r.Status, r.Body)
	} else if r.Decode(t, &detail); detail.Record.ID != first.ID || len(detail.Decisions) != 1 ||
		detail.Decisions[0].Action != "dlq.replay" || detail.Decisions[0].Actor != "admin:"+admin.ID {
		t.Errorf("show %s: %+v", first.ID, detail)
	}
	if r := p.Get(t, "/api/platform/admin/dlq/"+second.ID, admin.Token); r.Status != http.StatusOK {
		t.Errorf("show %s: %d %s", second.ID, r.Status, r.Body)
	} else if r.Decode(t, &detail); detail.Record.ReplayOf != first.ID || len(detail.Decisions) != 1 || detail.Decisions[0].Action != "dlq.discard" {
		t.Errorf("show %s: %+v", second.ID, detail)
	}
	if r := p.Get(t, "/api/platform/admin/dlq/fiat.commands.dlq:0:999999999", admin.Token); r.Status != http.StatusNotFound {
		t.Errorf("show of an unknown record: %d %s, want 404", r.Status, r.Body)
	}
	show := exec.Command(harness.Binary(t), "dlq", "show", second.ID)
	show.Env = append(append([]string(nil), p.Env...), "DATABASE_URL="+p.DatabaseURL, "KAFKA_BROKERS="+p.KafkaAddr)
	if out, err := show.CombinedOutput(); err != nil || !strings.Contains(string(out), "replay of "+first.ID) ||
		!strings.Contains(string(out), "dlq.discard by admin:"+admin.ID) {
		t.Errorf("platform dlq show %s: %v\n%s", second.ID, err, out)
	}

	counts := p.Get(t, "/api/platform/admin/parked", admin.Token)
	var pc schemas.ConsoleParked
	counts.Decode(t, &pc)
	for _, tp := range pc.Topics {
		if tp.Topic == "fiat.commands.dlq" && (tp.Total < 2 || tp.Parked > tp.Total-2) {
			t.Errorf("fiat.commands.dlq counts %+v: two of its records are decided", tp)
		}
	}
}
