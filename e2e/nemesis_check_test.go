package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/e2e/history"
	"github.com/fintech/platform/schemas"
)

// nemesisCheckReputation: for every user, score = SUM(weight) of their
// events and event_count = their count.
func nemesisCheckReputation(t *testing.T, db *pgxpool.Pool) {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT coalesce(s.user_id, e.user_id), coalesce(s.score, 0), coalesce(e.total, 0),
		coalesce(s.event_count, 0), coalesce(e.n, 0)
		FROM reputation_scores s
		FULL JOIN (SELECT user_id, sum(weight) AS total, count(*) AS n FROM reputation_events GROUP BY user_id) e USING (user_id)
		WHERE coalesce(s.score, 0) <> coalesce(e.total, 0) OR coalesce(s.event_count, 0) <> coalesce(e.n, 0)`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var user string
		var score, sum, count, n int64
		if err := rows.Scan(&user, &score, &sum, &count, &n); err != nil {
			t.Fatal(err)
		}
		t.Errorf("reputation of %s: score %d, its events sum to %d; event_count %d, it has %d events", user, score, sum, count, n)
	}
}

// nemesisBodyLimitThroughProxy: a body over 1 MiB through HAProxy is
// answered 400 payload_too_large, as it is straight from a gateway — sent
// whole (the gateway answers on the Content-Length, then reads and
// discards the rest: HAProxy 2.6 does not drain a request answered early,
// and a close with the body still arriving reset the connection) or only
// announced.
func nemesisBodyLimitThroughProxy(t *testing.T, p *harness.Platform) {
	t.Helper()
	hc := &http.Client{Timeout: 20 * time.Second}
	bad := 0
	for i, size := range []int{1<<20 + 1, 2 << 20, 8 << 20, 1<<20 + 1, 2 << 20, 8 << 20, 1<<20 + 1, 2 << 20, 8 << 20, 4 << 20} {
		resp, err := hc.Post(p.BaseURL+"/api/auth/register", "application/json", strings.NewReader(strings.Repeat(" ", size)))
		if err != nil {
			bad++
			t.Errorf("body %d of %d bytes through the proxy: %v", i, size, err)
			continue
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(raw), `"payload_too_large"`) {
			bad++
			t.Errorf("body %d of %d bytes through the proxy: %d %s", i, size, resp.StatusCode, raw)
		}
	}
	status, _, body := announceBody(t, p.BaseURL, http.MethodPost, "/api/auth/register", "", 2<<20)
	if status != http.StatusBadRequest || !strings.Contains(body, `"payload_too_large"`) {
		t.Errorf("announced body over 1 MiB through the proxy: %d %s", status, body)
	}
	t.Logf("10 bodies over 1 MiB through the proxy: %d not answered 400 payload_too_large", bad)
}

// nemesisWebhooks waits (up to 60 s) until every settled transfer of the
// subscribed user (sender or recipient) reached the endpoint, and returns
// what the endpoint received — each delivery verified as it arrived — and
// what it should have.
func nemesisWebhooks(t *testing.T, hook *hookReceiver, l *fiatLoad) *history.Webhooks {
	t.Helper()
	w := &history.Webhooks{Want: map[string]bool{}}
	for id, r := range l.results {
		if r.from == 0 || r.to == 0 {
			w.Want[id] = true
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		w.Deliveries = w.Deliveries[:0]
		got := map[string]bool{}
		for _, h := range hook.all() {
			var body struct {
				Data struct {
					TxID string `json:"txId"`
				} `json:"data"`
			}
			_ = json.Unmarshal(h.body, &body)
			w.Deliveries = append(w.Deliveries, history.Delivery{EventID: h.header.Get("webhook-id"), Subject: body.Data.TxID,
				Signed: h.signed, At: h.at})
			got[body.Data.TxID] = true
		}
		missing := 0
		for id := range w.Want {
			if !got[id] {
				missing++
			}
		}
		if missing == 0 || time.Now().After(deadline) {
			t.Logf("webhooks: %d transfers of the subscribed user, %d deliveries, %d missing", len(w.Want), len(w.Deliveries), missing)
			return w
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// nemesisState is what Postgres holds of the load after the run, for the
// history checker: the transfers, withdrawals and donations present by id
// with their ledger entries, the fiat conservation, and the webhooks.
func nemesisState(t *testing.T, db *pgxpool.Pool, fiat *fiatLoad, dons *donationLoad, hooks *history.Webhooks) history.State {
	t.Helper()
	ctx := context.Background()
	family := func(name string, match func(history.Op) bool, ledgerKind, appliedSQL string, args ...any) history.Family {
		f := history.Family{Name: name, Match: match, Applied: map[string]int{}, Ledger: map[string]int{}}
		rows, err := db.Query(ctx, appliedSQL, args...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			f.Applied[id]++
			ids = append(ids, id)
		}
		rows.Close()
		rows, err = db.Query(ctx, `SELECT source_id, count(*) FROM ledger_entries WHERE kind = $1 AND source_id = ANY($2) GROUP BY source_id`,
			ledgerKind, ids)
		if err != nil {
			t.Fatalf("%s ledger: %v", name, err)
		}
		for rows.Next() {
			var id string
			var n int
			if err := rows.Scan(&id, &n); err != nil {
				t.Fatal(err)
			}
			f.Ledger[id] = n
		}
		rows.Close()
		return f
	}
	var balances, fees int64
	for i, u := range fiat.users {
		balances += fiatBalance(t, fiat.p, u, fiat.wallets[i])
	}
	for _, r := range fiat.results {
		fees += r.fee
	}
	return history.State{
		Families: []history.Family{
			family("transfer", history.PathIs("/api/fiat/transfer"), schemas.LedgerKindTransfer,
				`SELECT id FROM fiat_transactions WHERE kind = 'transfer' AND from_wallet = ANY($1)`, fiat.wallets),
			family("withdrawal", history.PathIs("/api/fiat/withdraw"), schemas.LedgerKindWithdrawal,
				`SELECT id FROM fiat_transactions WHERE kind = 'withdrawal' AND from_wallet = ANY($1)`, fiat.wallets),
			family("donation", history.PathMatches("/api/charity/campaigns/"+dons.camp.ID, "/donations"), schemas.LedgerKindDonation,
				`SELECT id FROM charity_donations WHERE campaign_id = $1`, dons.camp.ID),
		},
		Conservation: []history.Equation{{Name: "fiat balances + fees + withdrawn = deposited",
			Left: balances + fees + fiat.withdrawn, Right: fiat.deposited}},
		Webhooks: hooks,
	}
}

// nemesisCheckHistory runs the history checker and reports its verdict:
// each violation is an error; per fault, the 503s in its window and, for a
// primary kill, the RTO (kill to the next 2xx write).
func nemesisCheckHistory(t *testing.T, h history.History, s history.State, faults []*nemesisFault) {
	t.Helper()
	v := history.Check(h, s, nemesisRecovery)
	for _, x := range v.Violations {
		t.Errorf("history: %s", x)
	}
	var rtos []time.Duration
	nemesisRTOs(h, faults)
	for _, f := range faults {
		line := fmt.Sprintf("fault %-18s %-34s at +%5.1fs for %5.1fs (window to +%5.1fs): %d answers 503 or cut", f.kind, f.member,
			f.start.Sub(faults[0].start).Seconds(), f.end.Sub(f.start).Seconds(),
			f.end.Add(nemesisRecovery[f.kind]).Sub(faults[0].start).Seconds(), f.unavailable)
		if f.unavailable > 0 {
			line += fmt.Sprintf(" from %+.1fs to %+.1fs", f.firstBad.Sub(f.start).Seconds(), f.lastBad.Sub(f.start).Seconds())
		}
		switch {
		case f.rto < 0:
			t.Errorf("no write answered 2xx after the %s at %s", f.kind, f.start.Format(time.StampMilli))
		default:
			line += fmt.Sprintf(", RTO %.1fs", f.rto.Seconds())
			if f.kind == "primary-kill" {
				rtos = append(rtos, f.rto)
			}
		}
		if f.note != "" {
			line += " (" + f.note + ")"
		}
		t.Log(line)
	}
	nemesisRTOTable(t, faults)
	sort.Slice(rtos, func(i, j int) bool { return rtos[i] < rtos[j] })
	if len(rtos) > 0 {
		t.Logf("RTO of the primary kills (start to the first 2xx write after their last 503) median %.1fs, max %.1fs over %d kills (target <= 15s)",
			rtos[len(rtos)/2].Seconds(), rtos[len(rtos)-1].Seconds(), len(rtos))
		if rtos[len(rtos)-1] > 15*time.Second {
			t.Errorf("RTO %.1fs above the 15 s target", rtos[len(rtos)-1].Seconds())
		}
	}
	verdict := "passed"
	if v.Failed() {
		verdict = fmt.Sprintf("FAILED with %d violations", len(v.Violations))
	}
	t.Logf("history checker: %d requests, %d faults: %s", len(h.Ops), len(h.Faults), verdict)
}

// nemesisRTOs gives each fault its unavailable answers — each 503 or cut
// answer goes to the latest fault started before it whose window holds it —
// and its RTO: the start to the first write sent after its last unavailable
// answer and answered 2xx (0 when clients saw nothing; -1 when no write
// succeeded after it).
func nemesisRTOs(h history.History, faults []*nemesisFault) {
	for _, o := range h.Ops {
		if o.Status != http.StatusServiceUnavailable && o.Status != 0 {
			continue
		}
		var best *nemesisFault
		for _, f := range faults {
			if !o.End.Before(f.start) && !o.End.After(f.end.Add(nemesisRecovery[f.kind])) && (best == nil || f.start.After(best.start)) {
				best = f
			}
		}
		if best == nil {
			continue
		}
		best.unavailable++
		if best.firstBad.IsZero() || o.End.Before(best.firstBad) {
			best.firstBad = o.End
		}
		if o.End.After(best.lastBad) {
			best.lastBad = o.End
		}
	}
	for _, f := range faults {
		since := f.start
		if f.unavailable > 0 {
			since = f.lastBad
		}
		switch ok := h.FirstWriteOK(since); {
		case ok.IsZero():
			f.rto = -1
		case f.unavailable == 0:
			f.rto = 0
		default:
			f.rto = ok.Sub(f.start)
		}
	}
}
