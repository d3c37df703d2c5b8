package history

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

const transfer = "/api/fiat/transfer"

// op is a write to the transfer path, sent at start, answered at end.
func op(key string, start, end float64, status int, ack string) Op {
	return Op{Method: http.MethodPost, Path: transfer, Key: key, Start: at(start), End: at(end), Status: status, Ack: ack}
}

// correct is a history the platform passes: a primary kill at +10 s (back
// at +14 s, recovery bound 5 s) during which k2 met a 503 and a cut
// answer, then succeeded on its same-key retry; a gateway kill at +30 s.
func correct() (History, State, Bounds) {
	h := History{
		Faults: []Fault{
			{Kind: "primary-kill", Member: "pg1", Start: at(10), End: at(14)},
			{Kind: "gateway-kill", Member: "gateway-1", Start: at(30), End: at(31)},
		},
		Ops: []Op{
			op("k1", 1, 1.1, 200, "tx1"),
			op("k2", 10.5, 15.5, 503, ""),
			{Method: http.MethodPost, Path: transfer, Key: "k2", Start: at(16), End: at(16.2), Err: "EOF"},
			op("k2", 17, 17.1, 200, "tx2"),
			op("k2", 18, 18.1, 200, "tx2"), // a replay names the same id
			op("k3", 30.1, 30.2, 503, ""),
			op("k3", 31.5, 31.6, 200, "tx3"),
			op("k4", 40, 40.1, 402, ""), // a refusal is an answer
			// The same key on another endpoint is another command.
			{Method: http.MethodPost, Path: "/api/mask/charges", Key: "k1", Start: at(42), End: at(42.1), Status: 201, Ack: "ch1"},
			{Method: http.MethodGet, Path: "/api/fiat/wallets", Start: at(41), End: at(41.1), Status: 200},
		},
	}
	s := State{
		Families: []Family{{Name: "transfer", Match: PathIs(transfer),
			Applied: map[string]int{"tx1": 1, "tx2": 1, "tx3": 1},
			Ledger:  map[string]int{"tx1": 1, "tx2": 1, "tx3": 1}}},
		Conservation: []Equation{{Name: "balances + fees = deposits", Left: 1000, Right: 1000}},
		Webhooks: &Webhooks{Want: map[string]bool{"tx1": true, "tx2": true},
			Deliveries: []Delivery{
				{EventID: "ev1", Subject: "tx1", Signed: true, At: at(2)},
				{EventID: "ev1", Subject: "tx1", Signed: true, At: at(3)}, // a redelivery, same id
				{EventID: "ev2", Subject: "tx2", Signed: true, At: at(18)},
			}},
	}
	return h, s, Bounds{"primary-kill": 5 * time.Second, "gateway-kill": 3 * time.Second}
}

func TestCorrectHistoryPasses(t *testing.T) {
	h, s, b := correct()
	v := Check(h, s, b)
	if v.Failed() {
		t.Fatalf("a correct history failed: %v", v.Violations)
	}
	if v.Unavailable[0] != 2 || v.Unavailable[1] != 1 {
		t.Errorf("503s per fault %v, want [2 1]", v.Unavailable)
	}
}

// TestDoctoredHistoriesFail: each doctored history breaks one property,
// and the checker names it.
func TestDoctoredHistoriesFail(t *testing.T) {
	cases := []struct {
		name   string
		doctor func(h *History, s *State, b Bounds)
		want   string
	}{
		{"a lost ack: acknowledged, not applied", func(h *History, s *State, b Bounds) {
			delete(s.Families[0].Applied, "tx2")
		}, PropLostAck},
		{"a duplicate: one key acknowledged as two ids", func(h *History, s *State, b Bounds) {
			h.Ops[4].Ack = "tx2bis"
			s.Families[0].Applied["tx2bis"] = 1
		}, PropDuplicate},
		{"a duplicate: applied and never acknowledged", func(h *History, s *State, b Bounds) {
			s.Families[0].Applied["tx9"] = 1
		}, PropUnacked},
		{"a duplicate: one id applied twice", func(h *History, s *State, b Bounds) {
			s.Families[0].Applied["tx3"] = 2
		}, PropDuplicate},
		{"a 503 outside its window", func(h *History, s *State, b Bounds) {
			h.Ops = append(h.Ops, op("k5", 25, 25.1, 503, ""), op("k5", 26, 26.1, 200, "tx5"))
			s.Families[0].Applied["tx5"] = 1
			s.Families[0].Ledger["tx5"] = 1
		}, PropWindow},
		{"a 503 inside only a chained grace: past its own fault's bound, before the next fault", func(h *History, s *State, b Bounds) {
			// +19.5 s: primary kill ended at +14 + 5 s bound; the gateway kill starts at +30.
			h.Ops = append(h.Ops, op("k6", 19, 19.5, 503, ""), op("k6", 20, 20.1, 200, "tx6"))
			s.Families[0].Applied["tx6"] = 1
			s.Families[0].Ledger["tx6"] = 1
		}, PropWindow},
		{"a 500", func(h *History, s *State, b Bounds) {
			h.Ops[0].Status = 500
			h.Ops[0].Ack = ""
			h.Ops = append(h.Ops, op("k1", 2, 2.1, 200, "tx1"))
		}, PropStatus500},
		{"a 503 never retried to an answer", func(h *History, s *State, b Bounds) {
			h.Ops = append(h.Ops, op("k7", 12, 12.1, 503, ""))
		}, PropUnresolved},
		{"a 429 on a same-key retry after a 503", func(h *History, s *State, b Bounds) {
			h.Ops = append(h.Ops, op("k3", 30.5, 30.6, 429, ""))
		}, PropRateLimited},
		{"two ledger entries for one source", func(h *History, s *State, b Bounds) {
			s.Families[0].Ledger["tx1"] = 2
		}, PropLedger},
		{"money created", func(h *History, s *State, b Bounds) {
			s.Conservation[0].Left = 1001
		}, PropConservation},
		{"an event under two ids", func(h *History, s *State, b Bounds) {
			s.Webhooks.Deliveries = append(s.Webhooks.Deliveries, Delivery{EventID: "ev3", Subject: "tx2", Signed: true, At: at(20)})
		}, PropEventTwice},
		{"a delivery that did not verify at receipt", func(h *History, s *State, b Bounds) {
			s.Webhooks.Deliveries[2].Signed = false
		}, PropUnsigned},
		{"an event never delivered", func(h *History, s *State, b Bounds) {
			s.Webhooks.Deliveries = s.Webhooks.Deliveries[:2]
		}, PropMissingEvent},
		{"a fault kind without a declared bound", func(h *History, s *State, b Bounds) {
			delete(b, "gateway-kill")
		}, PropNoBound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, s, b := correct()
			c.doctor(&h, &s, b)
			v := Check(h, s, b)
			if !v.Has(c.want) {
				t.Fatalf("the checker passed a history with %s: violations %v, want one of %q", c.name, v.Violations, c.want)
			}
			t.Logf("%v", v.Violations)
		})
	}
}

// TestRecorderRecordsWhatWasAcknowledged: the recorder notes each request's
// key, status and the id its answer named, and hands the body on unread.
func TestRecorderRecordsWhatWasAcknowledged(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Idempotency-Key") == "busy" {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"transactionId":"tx42","feeKzt":1}`)
	}))
	defer srv.Close()
	rec := &Recorder{}
	client := &http.Client{Transport: rec}
	for _, key := range []string{"busy", "ok"} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+transfer, strings.NewReader(`{}`))
		req.Header.Set("Idempotency-Key", key)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if key == "ok" && !strings.Contains(string(body), "tx42") {
			t.Fatalf("the body was not handed on: %s", body)
		}
	}
	ops := rec.History().Ops
	if len(ops) != 2 || ops[0].Status != 503 || ops[0].Key != "busy" || ops[1].Ack != "tx42" || ops[1].Key != "ok" ||
		ops[1].Path != transfer || ops[1].End.Before(ops[1].Start) {
		t.Fatalf("recorded %+v", ops)
	}
}
