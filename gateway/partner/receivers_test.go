package partner

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/partner"
	"github.com/fintech/platform/storage/pipeline"
)

// fakeStore records every call and answers as a first delivery.
type fakeStore struct {
	royalties []store.RoyaltyRow
	prizes    []store.PrizeRow
	events    []pipeline.OutboxRow
}

func (f *fakeStore) RecordRoyalty(_ context.Context, r store.RoyaltyRow, ev store.EventFunc[store.RoyaltyRow]) (store.RoyaltyRow, bool, error) {
	f.royalties = append(f.royalties, r)
	row, err := ev(r, "")
	f.events = append(f.events, row)
	return r, true, err
}

func (f *fakeStore) RecordPodium(_ context.Context, e []store.PrizeRow, ev store.EventFunc[store.PrizeRow]) ([]store.PrizeRow, []store.PrizeRow, error) {
	f.prizes = append(f.prizes, e...)
	return e, nil, nil
}

func (f *fakeStore) PublishTournament(_ context.Context, t store.TournamentRow, _ time.Time, _ func(store.TournamentRow) (pipeline.OutboxRow, error)) (store.TournamentRow, store.Publication, error) {
	return t, store.Created, nil
}

func (f *fakeStore) RecordCertPayout(_ context.Context, p store.CertPayoutRow, _ store.EventFunc[store.CertPayoutRow]) (store.CertPayoutRow, bool, error) {
	return p, true, nil
}

func (f *fakeStore) Royalties(context.Context, string, schemas.Position, int) ([]store.RoyaltyRow, int64, error) {
	return nil, 0, nil
}
func (f *fakeStore) Prizes(context.Context, string, schemas.Position, int) ([]store.PrizeRow, int64, error) {
	return nil, 0, nil
}
func (f *fakeStore) CertPayouts(context.Context, string, schemas.Position, int) ([]store.CertPayoutRow, int64, error) {
	return nil, 0, nil
}
func (f *fakeStore) Upcoming(context.Context, time.Time, int) ([]store.TournamentRow, error) {
	return nil, nil
}
func (f *fakeStore) CertStats(context.Context, string) (store.CertStats, error) {
	return store.CertStats{}, nil
}
func (f *fakeStore) Earnings(context.Context, string) (store.Earnings, error) {
	return store.Earnings{}, nil
}

type okPinger struct{}

func (okPinger) Ping(context.Context) error { return nil }

const testSecret = "test-partner-secret"

var testNow = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)

func newTestApp(t *testing.T, st *fakeStore) *fiber.App {
	t.Helper()
	srv := server.New(ratelimit.New(ratelimit.Limits{}, time.Now), prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	deny := func(c *fiber.Ctx) error { return fiber.ErrUnauthorized }
	h, err := NewHandlers(st, st, okPinger{}, deny, Secrets{HMAC: testSecret, Chess: "legacy-chess"},
		func() time.Time { return testNow }, srv.Routes)
	if err != nil {
		t.Fatal(err)
	}
	h.Register(srv.Root())
	srv.Finish()
	return srv.App
}

// post sends body to path signed with the test secret (unsigned when sign is false).
func post(t *testing.T, app *fiber.App, path, body string, sign bool, contentType string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if sign {
		ts := strconv.FormatInt(testNow.Unix(), 10)
		req.Header.Set(HeaderTimestamp, ts)
		req.Header.Set(HeaderSignature, "sha256="+hex.EncodeToString(Sign([]byte(testSecret), ts, []byte(body))))
	}
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s answered %d with non-JSON %q", path, resp.StatusCode, raw)
	}
	return resp.StatusCode, m
}

func TestReceiversBadInput(t *testing.T) {
	t.Parallel()
	const (
		rights = PrefixRights + "/royalties/verify-webhook"
		chess  = PrefixChess + "/tournament-finalized"
		tour   = PrefixChess + "/tournaments"
		cert   = PrefixCert + "/payouts/certify-webhook"
		okRoy  = `{"eventId":"e1","email":"A@Example.com","productKey":"p","period":"2030-01","amount":100}`
	)
	podium := func(n int) string {
		var items []string
		for i := 1; i <= n; i++ {
			items = append(items, fmt.Sprintf(`{"email":"p%d@example.com","place":%d,"amount":10}`, i, i))
		}
		return `{"tournamentId":"t1","podium":[` + strings.Join(items, ",") + `]}`
	}
	tests := []struct {
		name   string
		path   string
		body   string
		sign   bool
		ctype  string
		status int
		code   string
		field  string
	}{
		{"royalty ok", rights, okRoy, true, "application/json", 201, "", ""},
		{"unsigned", rights, okRoy, false, "application/json", 401, "signature_invalid", ""},
		{"unsigned garbage is refused before parsing", rights, `{{{`, false, "application/json", 401, "signature_invalid", ""},
		{"no content type", rights, okRoy, true, "", 400, "content_type_required", ""},
		{"malformed JSON", rights, `{"eventId":`, true, "application/json", 400, "invalid_json", ""},
		{"array body", rights, `[1,2]`, true, "application/json", 400, "invalid_json", ""},
		{"string body", rights, `"hello"`, true, "application/json", 400, "invalid_json", ""},
		{"null body", rights, `null`, true, "application/json", 400, "invalid_json", ""},
		{"empty body", rights, ``, true, "application/json", 400, "invalid_json", ""},
		{"missing eventId", rights, `{"email":"a@example.com","productKey":"p","period":"x","amount":1}`, true, "application/json", 422, "validation_failed", "eventId"},
		{"eventId not a string", rights, `{"eventId":5,"email":"a@example.com","productKey":"p","period":"x","amount":1}`, true, "application/json", 422, "validation_failed", "eventId"},
		{"bad e-mail", rights, `{"eventId":"e","email":"not-mail","productKey":"p","period":"x","amount":1}`, true, "application/json", 422, "validation_failed", "email"},
		{"e-mail with NUL", rights, `{"eventId":"e","email":"a\u0000@example.com","productKey":"p","period":"x","amount":1}`, true, "application/json", 422, "validation_failed", "email"},
		{"negative amount", rights, `{"eventId":"e","email":"a@example.com","productKey":"p","period":"x","amount":-5}`, true, "application/json", 422, "validation_failed", "amount"},
		{"zero amount", rights, `{"eventId":"e","email":"a@example.com","productKey":"p","period":"x","amount":0}`, true, "application/json", 422, "validation_failed", "amount"},
		{"fractional amount", rights, `{"eventId":"e","email":"a@example.com","productKey":"p","period":"x","amount":1.5}`, true, "application/json", 422, "validation_failed", "amount"},
		{"string amount", rights, `{"eventId":"e","email":"a@example.com","productKey":"p","period":"x","amount":"5"}`, true, "application/json", 422, "validation_failed", "amount"},
		{"huge amount", rights, `{"eventId":"e","email":"a@example.com","productKey":"p","period":"x","amount":99999999999999999999}`, true, "application/json", 422, "validation_failed", "amount"},
		{"NUL in productKey", rights, `{"eventId":"e","email":"a@example.com","productKey":"p\u0000","period":"x","amount":1}`, true, "application/json", 422, "validation_failed", "productKey"},
		{"invalid UTF-8", rights, "{\"eventId\":\"e\xff\",\"email\":\"a@example.com\",\"productKey\":\"p\",\"period\":\"x\",\"amount\":1}", true, "application/json", 422, "validation_failed", "eventId"},
		{"long eventId", rights, `{"eventId":"` + strings.Repeat("e", 201) + `","email":"a@example.com","productKey":"p","period":"x","amount":1}`, true, "application/json", 422, "validation_failed", "eventId"},
		{"podium ok", chess, podium(3), true, "application/json", 201, "", ""},
		{"podium of 100", chess, podium(100), true, "application/json", 201, "", ""},
		{"podium of 101", chess, podium(101), true, "application/json", 422, "validation_failed", "podium"},
		{"huge podium", chess, podium(5000), true, "application/json", 422, "validation_failed", "podium"},
		{"empty podium", chess, `{"tournamentId":"t1","podium":[]}`, true, "application/json", 422, "validation_failed", "podium"},
		{"podium not an array", chess, `{"tournamentId":"t1","podium":{"a":1}}`, true, "application/json", 422, "validation_failed", "podium"},
		{"podium place zero", chess, `{"tournamentId":"t1","podium":[{"email":"a@example.com","place":0,"amount":1}]}`, true, "application/json", 422, "validation_failed", "podium[0].place"},
		{"podium place string", chess, `{"tournamentId":"t1","podium":[{"email":"a@example.com","place":"1","amount":1}]}`, true, "application/json", 422, "validation_failed", "podium[0].place"},
		{"podium bad e-mail", chess, `{"tournamentId":"t1","podium":[{"email":"x","place":1,"amount":1}]}`, true, "application/json", 422, "validation_failed", "podium[0].email"},
		{"podium negative amount", chess, `{"tournamentId":"t1","podium":[{"email":"a@example.com","place":1,"amount":-1}]}`, true, "application/json", 422, "validation_failed", "podium[0].amount"},
		{"podium repeats an entry", chess, `{"tournamentId":"t1","podium":[{"email":"a@example.com","place":1,"amount":1},{"email":"A@example.com","place":1,"amount":2}]}`, true, "application/json", 422, "validation_failed", "podium[1]"},
		{"podium without tournament", chess, `{"podium":[{"email":"a@example.com","place":1,"amount":1}]}`, true, "application/json", 422, "validation_failed", "tournamentId"},
		{"chess legacy header", chess, podium(1), false, "application/json", 401, "signature_invalid", ""},
		{"tournament ok", tour, `{"id":"t9","startsAt":"2031-01-01T10:00:00Z","format":"swiss","prizePool":1000,"capacity":64,"entries":0}`, true, "application/json", 201, "", ""},
		{"tournament bad time", tour, `{"id":"t9","startsAt":"tomorrow","format":"swiss","prizePool":1000,"capacity":64,"entries":0}`, true, "application/json", 422, "validation_failed", "startsAt"},
		{"tournament overfull", tour, `{"id":"t9","startsAt":"2031-01-01T10:00:00Z","format":"swiss","prizePool":1000,"capacity":64,"entries":65}`, true, "application/json", 422, "validation_failed", "entries"},
		{"tournament no capacity", tour, `{"id":"t9","startsAt":"2031-01-01T10:00:00Z","format":"swiss","prizePool":1000,"entries":1}`, true, "application/json", 422, "validation_failed", "capacity"},
		{"cert ok", cert, `{"eventId":"c1","email":"a@example.com","artifactVersionId":"av1","amount":7}`, true, "application/json", 201, "", ""},
		{"cert missing artifact", cert, `{"eventId":"c1","email":"a@example.com","amount":7}`, true, "application/json", 422, "validation_failed", "artifactVersionId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			app := newTestApp(t, &fakeStore{})
			status, body := post(t, app, tt.path, tt.body, tt.sign, tt.ctype)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %v", status, tt.status, body)
			}
			if tt.code != "" && body["error"] != tt.code {
				t.Fatalf("error %v, want %s: %v", body["error"], tt.code, body)
			}
			if tt.field != "" {
				fields, _ := body["fields"].(map[string]any)
				if _, ok := fields[tt.field]; !ok {
					t.Fatalf("fields %v lack %s", fields, tt.field)
				}
			}
		})
	}
}

func TestRoyaltyRecordsLowerCasedEmailAndEvent(t *testing.T) {
	t.Parallel()
	st := &fakeStore{}
	app := newTestApp(t, st)
	status, body := post(t, app, PrefixRights+"/royalties/verify-webhook",
		`{"eventId":"e1","email":" Alice@Example.COM ","productKey":"book-1","period":"2030-01","amount":1500}`, true, "application/json")
	if status != 201 || body["replayed"] != false || body["eventId"] != "e1" || body["paidAt"] != "2030-01-01T12:00:00Z" || body["amount"] != 1500.0 {
		t.Fatalf("got %d %v", status, body)
	}
	if len(st.royalties) != 1 || st.royalties[0].Email != "alice@example.com" {
		t.Fatalf("stored %+v", st.royalties)
	}
	if len(st.events) != 1 || st.events[0].Topic != "events.partner" || st.events[0].Type != "royalty.recorded" || st.events[0].Key != "alice@example.com" {
		t.Fatalf("events %+v", st.events)
	}
}
