package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/schemas"
)

// TestCharityCrashRecovery kills the platform (SIGKILL) while donations are
// in flight and restarts it; clients retry with their Idempotency-Key.
// Nothing is lost and nothing is applied twice: every donation settles
// once, money is conserved, every donation has exactly one ledger entry
// with the id it answered with, and campaign.goal_reached fires once.
func TestCharityCrashRecovery(t *testing.T) {
	t.Parallel() // a long test: see "Parallel tests" in main_test.go
	p := harness.Start(t, harness.Options{})
	secret := fiatSecret(t, p)
	const (
		donors  = 10
		total   = 600
		amount  = int64(100)
		deposit = int64(100_000)
		goal    = int64(30_000)
	)
	camp := charityActiveCampaign(t, p, p.Register(t, "crash-organizer"), "crash", goal)
	type donor struct {
		u harness.User
		w string
	}
	ds := make([]donor, donors)
	for i := range ds {
		u, w := charityFundedDonor(t, p, secret, fmt.Sprintf("crash-donor-%d", i), deposit)
		ds[i] = donor{u, w}
	}
	client := &http.Client{Timeout: 10 * time.Second}
	post := func(d donor, key string) (int, []byte, error) {
		body, _ := json.Marshal(map[string]any{"walletId": d.w, "amountKzt": amount})
		req, err := http.NewRequest(http.MethodPost, p.BaseURL+"/api/charity/campaigns/"+camp.ID+"/donations", bytes.NewReader(body))
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+d.u.Token)
		req.Header.Set("Idempotency-Key", key)
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		return resp.StatusCode, raw, err
	}

	var (
		next, done, retries atomic.Int64
		mu                  sync.Mutex
		answers             = map[string]charityDonation{} // by donation id
		problems            []string
	)
	killAt := make(chan struct{})
	var once sync.Once
	deadline := time.Now().Add(90 * time.Second)
	var wg sync.WaitGroup
	for range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= total {
					return
				}
				d, key := ds[i%donors], fmt.Sprintf("crash-%s-%d", camp.ID, i)
				for {
					status, body, err := post(d, key)
					if err == nil && status == http.StatusCreated {
						var res charityDonation
						_ = json.Unmarshal(body, &res)
						mu.Lock()
						answers[res.DonationID] = res
						mu.Unlock()
						break
					}
					if (err == nil && status < 500) || time.Now().After(deadline) {
						mu.Lock()
						problems = append(problems, fmt.Sprintf("donation %d: %d %s %v", i, status, body, err))
						mu.Unlock()
						break
					}
					retries.Add(1)
					time.Sleep(100 * time.Millisecond)
				}
				if done.Add(1) == total/3 {
					once.Do(func() { close(killAt) })
				}
			}
		}()
	}
	<-killAt
	p.Kill()
	time.Sleep(300 * time.Millisecond)
	p.Restart()
	wg.Wait()
	if len(problems) > 0 {
		t.Fatalf("%d problems, first: %s", len(problems), problems[0])
	}
	if retries.Load() == 0 {
		t.Fatal("no request was retried: the crash did not hit the load")
	}
	t.Logf("%d requests retried across the crash", retries.Load())
	if len(answers) != total {
		t.Fatalf("%d distinct donations answered, want %d", len(answers), total)
	}

	var balances int64
	for _, d := range ds {
		balances += fiatBalance(t, p, d.u, d.w)
	}
	got := charityGet(t, p, camp.ID, "")
	if got.Progress.RaisedKzt != total*amount || balances+got.Progress.RaisedKzt != donors*deposit {
		t.Fatalf("raised %d (want %d), balances %d: money not conserved", got.Progress.RaisedKzt, total*amount, balances)
	}

	// One ledger entry per donation, with the answered id.
	entries := map[string]string{} // entry id -> source id
	harness.Eventually(t, 60*time.Second, "every donation anchored", func() bool {
		clear(entries)
		cursor := ""
		for {
			path := "/api/ledger/entries?kind=charity:donation&limit=200"
			if cursor != "" {
				path += "&cursor=" + url.QueryEscape(cursor)
			}
			r := p.Get(t, path, "")
			var page struct {
				Items []struct {
					ID       string `json:"id"`
					SourceID string `json:"sourceId"`
				} `json:"items"`
				NextCursor *string `json:"nextCursor"`
			}
			r.Decode(t, &page)
			for _, e := range page.Items {
				if _, dup := entries[e.ID]; dup {
					t.Fatalf("entry %s listed twice", e.ID)
				}
				entries[e.ID] = e.SourceID
			}
			if page.NextCursor == nil {
				break
			}
			cursor = *page.NextCursor
		}
		return len(entries) >= total
	})
	if len(entries) != total {
		t.Fatalf("%d charity:donation entries, want %d", len(entries), total)
	}
	for id, res := range answers {
		if entries[res.LedgerEntryID] != id {
			t.Fatalf("donation %s: entry %s has source %q", id, res.LedgerEntryID, entries[res.LedgerEntryID])
		}
	}

	// A last donation after everything: once its event is read, all are.
	last, lw := charityFundedDonor(t, p, secret, "crash-last", 10)
	r := p.Post(t, "/api/charity/campaigns/"+camp.ID+"/donations", last.Token, map[string]any{"walletId": lw, "amountKzt": 1})
	var lastRes charityDonation
	r.Decode(t, &lastRes)
	evs := charityEvents(t, p, camp.ID, 60*time.Second, func(evs []schemas.Envelope) bool {
		for _, e := range evs {
			var d schemas.DonationReceived
			if e.Type == schemas.TypeDonationReceived && json.Unmarshal(e.Data, &d) == nil && d.DonationID == lastRes.DonationID {
				return true
			}
		}
		return false
	})
	received := map[string]bool{}
	for _, e := range evs {
		var d schemas.DonationReceived
		if e.Type == schemas.TypeDonationReceived && json.Unmarshal(e.Data, &d) == nil {
			received[d.DonationID] = true
		}
	}
	if len(received) != total+1 {
		t.Fatalf("donation.received for %d donations, want %d", len(received), total+1)
	}
	if n := countType(evs, schemas.TypeCampaignGoalReached); n != 1 {
		t.Fatalf("campaign.goal_reached fired %d times, want once", n)
	}

	// This platform is the test's own: once the sink caught up, the
	// ClickHouse stats equal Postgres exactly, whatever the relay re-sent
	// after the crash.
	raised := charityGet(t, p, camp.ID, "").Progress.RaisedKzt
	var s struct {
		TotalRaisedKzt int64 `json:"totalRaisedKzt"`
		DonorCount     int64 `json:"donorCount"`
		TopCategories  []struct {
			Category  string `json:"category"`
			RaisedKzt int64  `json:"raisedKzt"`
		} `json:"topCategories"`
	}
	harness.Eventually(t, 60*time.Second, "charity stats caught up", func() bool {
		r := p.Get(t, "/api/charity/stats", "")
		if r.Status != http.StatusOK {
			return false
		}
		r.Decode(t, &s)
		return s.TotalRaisedKzt >= raised
	})
	if s.TotalRaisedKzt != raised || s.DonorCount != donors+1 || len(s.TopCategories) != 1 ||
		s.TopCategories[0].Category != "crash" || s.TopCategories[0].RaisedKzt != raised {
		t.Fatalf("stats %+v, want %d raised by %d donors in one category", s, raised, donors+1)
	}
}
