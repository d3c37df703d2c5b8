package main

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/storage/ledger"
)

func TestFeeFrom(t *testing.T) {
	for _, tc := range []struct {
		body string
		want int64
	}{
		{`{"transactionId":"x","feeKzt":17,"fromBalanceKzt":5}`, 17},
		{`{"feeKzt":0}`, 0},
		{`{"feeKzt":1234567}`, 1234567},
		{`{"error":{"code":"insufficient_balance"}}`, 0},
	} {
		if got := feeFrom([]byte(tc.body)); got != tc.want {
			t.Errorf("feeFrom(%s) = %d, want %d", tc.body, got, tc.want)
		}
	}
}

func TestErrorCode(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"error":{"code":"insufficient_balance","message":"x"}}`, "insufficient_balance"},
		{`{"transactionId":"x","feeKzt":17}`, ""},
		{`{"error":{"code":"unterminated`, ""},
	} {
		if got := errorCode([]byte(tc.body)); got != tc.want {
			t.Errorf("errorCode(%s) = %q, want %q", tc.body, got, tc.want)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{9, 1, 5}, 5},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if orDash(nil, "%.1f") != "-" || orDash([]float64{2, 4}, "%.1f") != "3.0" {
		t.Error("orDash")
	}
}

// The pre-built bodies are the transfer request the API takes: two distinct
// accounts and an amount in range.
func TestPrebuild(t *testing.T) {
	accounts := []account{{email: "a@example.com", token: "ta", walletID: "wa"},
		{email: "b@example.com", token: "tb", walletID: "wb"}, {email: "c@example.com", token: "tc", walletID: "wc"}}
	o := options{minAmount: 100, maxAmount: 200}
	byWallet := map[string]account{}
	for _, a := range accounts {
		byWallet[a.walletID] = a
	}
	for _, pb := range prebuild(accounts, 200, o, rand.New(rand.NewPCG(1, 2))) {
		var body struct {
			FromWalletID string `json:"fromWalletId"`
			ToEmail      string `json:"toEmail"`
			AmountKzt    int64  `json:"amountKzt"`
			Memo         string `json:"memo"`
		}
		if err := json.Unmarshal(pb.body, &body); err != nil {
			t.Fatalf("body %s: %v", pb.body, err)
		}
		from, ok := byWallet[body.FromWalletID]
		if !ok || from.email == body.ToEmail {
			t.Fatalf("body %s: unknown sender or sends to itself", pb.body)
		}
		if string(pb.auth) != "Bearer "+from.token {
			t.Fatalf("auth %q for sender %s", pb.auth, from.walletID)
		}
		if body.AmountKzt < 100 || body.AmountKzt > 200 {
			t.Fatalf("amount %d out of range", body.AmountKzt)
		}
	}
}

func TestProcCPU(t *testing.T) {
	deadline := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(deadline) {
	}
	if procCPU(os.Getpid()) <= 0 {
		t.Error("procCPU of this process is 0")
	}
	if procCPU(0) != 0 {
		t.Error("procCPU(0) should be 0")
	}
	if selfCPU() <= 0 {
		t.Error("selfCPU is 0")
	}
	// This process spun 50 ms on one core: the machine was busy at least
	// that long, and never more than all its cores' time.
	b0, c0 := machineCPU()
	deadline = time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(deadline) {
	}
	b1, c1 := machineCPU()
	if busy, all := b1-b0, c1-c0; busy < 30*time.Millisecond || busy > all || all <= 0 {
		t.Errorf("machineCPU over a 50 ms spin: busy %s of %s", busy, all)
	}
}

// Both baselines conserve money, count only committed transfers, and S
// builds a chain that verifies under the ledger's hash rule.
func TestBaselines(t *testing.T) {
	db, err := newBaselineDB(t)
	if err != nil {
		t.Fatal(err)
	}
	o := options{users: 5, deposit: 20_000, minAmount: 100, maxAmount: 5_000, baselineDuration: time.Second, baselineConns: 4}
	for _, kind := range []string{"T", "S"} {
		res, err := runBaseline(db, kind, 4, o)
		if err != nil {
			t.Fatal(err)
		}
		if !res.conserved || res.ok == 0 {
			t.Fatalf("baseline %s: conserved %v, %d committed", kind, res.conserved, res.ok)
		}
		// Small deposits: some transfers must have been refused and not counted.
		if res.attempted == res.ok {
			t.Logf("baseline %s: no transfer was refused (%d committed)", kind, res.ok)
		}
	}
	rows, err := db.pool.Query(context.Background(), `SELECT height, id, kind, source_id, actor_user_id, amount_cents, currency, meta, ts, prev_hash, hash
		FROM bs_ledger_entries ORDER BY height`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	prev, n := ledger.GenesisPrevHash, int64(0)
	for rows.Next() {
		var e ledger.Entry
		var meta string
		if err := rows.Scan(&e.Height, &e.ID, &e.Kind, &e.SourceID, &e.ActorUserID, &e.AmountCents, &e.Currency, &meta, &e.Timestamp, &e.PrevHash, &e.Hash); err != nil {
			t.Fatal(err)
		}
		e.Meta = []byte(meta)
		n++
		if e.Height != n || e.PrevHash != prev || e.ComputeHash(baselineSalt) != e.Hash {
			t.Fatalf("entry %d breaks the chain: prev %s (want %s), hash %s (recomputed %s)", e.Height, e.PrevHash, prev, e.Hash, e.ComputeHash(baselineSalt))
		}
		prev = e.Hash
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("baseline S appended no ledger entry")
	}
}

// TestKeepLog: the log of a run that did not drain is kept whole, in a new
// file per run.
func TestKeepLog(t *testing.T) {
	dir := t.TempDir()
	logs := strings.Repeat("level=WARN msg=\"relay: publish failed\"\n", 500)
	a, err := keepLog(dir, "platform-r1c32", logs)
	if err != nil {
		t.Fatal(err)
	}
	b, err := keepLog(dir, "platform-r1c32", "second run\n")
	if err != nil {
		t.Fatal(err)
	}
	if a == b || filepath.Dir(a) != dir || !strings.Contains(filepath.Base(a), "platform-r1c32") {
		t.Fatalf("kept as %s and %s", a, b)
	}
	got, err := os.ReadFile(a)
	if err != nil || string(got) != logs {
		t.Fatalf("kept %d of %d bytes (%v)", len(got), len(logs), err)
	}
}
