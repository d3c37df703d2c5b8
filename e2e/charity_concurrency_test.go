package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/schemas"
)

// TestCharityConcurrentDonations sends 200 donations at once to one
// campaign from 20 donors who cannot all afford theirs: money is conserved
// (donor balances + campaign total = deposits), the answers' totals are
// distinct and consistent, and campaign.goal_reached fires exactly once.
func TestCharityConcurrentDonations(t *testing.T) {
	p := shared(t)
	secret := fiatSecret(t, p)
	const (
		donors   = 20
		each     = 10
		deposit  = int64(10_000)
		amount   = int64(1_500) // 6 of each donor's 10 fit the deposit
		goal     = int64(150_000)
		affords  = deposit / amount
		expected = donors * affords * amount
	)
	camp := charityActiveCampaign(t, p, p.Register(t, "organizer-hot"), "hot", goal)

	type donor struct {
		u harness.User
		w string
	}
	ds := make([]donor, donors)
	for i := range ds {
		u, w := charityFundedDonor(t, p, secret, fmt.Sprintf("hot-donor-%d", i), deposit)
		ds[i] = donor{u, w}
	}

	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: donors * each}}
	type result struct {
		status int
		body   []byte
		err    error
	}
	results := make([]result, donors*each)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := ds[i%donors]
			<-start
			st, b, err := rawPost(client, p.BaseURL+"/api/charity/campaigns/"+camp.ID+"/donations", d.u.Token,
				map[string]any{"walletId": d.w, "amountKzt": amount, "anonymous": i%3 == 0})
			results[i] = result{st, b, err}
		}()
	}
	close(start)
	wg.Wait()

	var ok, refused int64
	totals := map[int64]bool{}
	for i, r := range results {
		switch {
		case r.err != nil:
			t.Fatalf("donation %d: %v", i, r.err)
		case r.status == http.StatusCreated:
			ok++
			var res charityDonation
			if err := json.Unmarshal(r.body, &res); err != nil {
				t.Fatal(err)
			}
			if totals[res.CampaignTotalKzt] || res.CampaignTotalKzt%amount != 0 || res.CampaignTotalKzt > expected {
				t.Fatalf("donation %d: total %d repeated or impossible", i, res.CampaignTotalKzt)
			}
			totals[res.CampaignTotalKzt] = true
		case r.status == http.StatusBadRequest:
			refused++
		default:
			t.Fatalf("donation %d: %d %s", i, r.status, r.body)
		}
	}
	if ok != donors*affords || refused != donors*each-donors*affords {
		t.Fatalf("%d settled and %d refused, want %d and %d", ok, refused, donors*affords, donors*each-donors*affords)
	}

	var balances int64
	for _, d := range ds {
		balances += fiatBalance(t, p, d.u, d.w)
	}
	got := charityGet(t, p, camp.ID, "")
	if balances+got.Progress.RaisedKzt != donors*deposit || got.Progress.RaisedKzt != expected {
		t.Fatalf("money not conserved: balances %d + raised %d != deposits %d (want raised %d)",
			balances, got.Progress.RaisedKzt, donors*deposit, expected)
	}
	if got.Progress.DonorCount != donors {
		t.Fatalf("donorCount %d, want %d", got.Progress.DonorCount, donors)
	}

	// A last donation, sent after every other one was answered, is queued
	// after all their events: once it is read, every goal_reached is too.
	last, lw := charityFundedDonor(t, p, secret, "hot-last", deposit)
	r := p.Post(t, "/api/charity/campaigns/"+camp.ID+"/donations", last.Token, map[string]any{"walletId": lw, "amountKzt": 1})
	if r.Status != http.StatusCreated {
		t.Fatalf("last donation: %d %s", r.Status, r.Body)
	}
	var lastRes charityDonation
	r.Decode(t, &lastRes)
	evs := charityEvents(t, p, camp.ID, 60*time.Second, func(evs []schemas.Envelope) bool {
		for _, e := range evs {
			if e.Type == schemas.TypeDonationReceived {
				var d schemas.DonationReceived
				if json.Unmarshal(e.Data, &d) == nil && d.DonationID == lastRes.DonationID {
					return true
				}
			}
		}
		return false
	})
	if n := countType(evs, schemas.TypeDonationReceived); n != int(ok)+1 {
		t.Fatalf("%d donation.received events, want %d", n, ok+1)
	}
	if n := countType(evs, schemas.TypeCampaignGoalReached); n != 1 {
		t.Fatalf("campaign.goal_reached fired %d times, want once", n)
	}
	for _, e := range evs {
		if e.Type == schemas.TypeCampaignGoalReached {
			var g schemas.CampaignGoalReached
			if err := json.Unmarshal(e.Data, &g); err != nil || g.RaisedKzt < goal || g.RaisedKzt-amount >= goal {
				t.Fatalf("goal_reached data: %s", e.Data)
			}
		}
	}
}
