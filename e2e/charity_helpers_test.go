package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/schemas"
)

// charityCampaign is the API shape of a campaign as the tests read it.
type charityCampaign struct {
	ID        string   `json:"id"`
	Title     string   `json:"title"`
	Category  string   `json:"category"`
	GoalKzt   int64    `json:"goalKzt"`
	Media     []string `json:"media"`
	Status    string   `json:"status"`
	Pinned    bool     `json:"pinned"`
	Featured  bool     `json:"featured"`
	CreatedAt string   `json:"createdAt"`
	EndsAt    *string  `json:"endsAt"`
	Progress  struct {
		RaisedKzt  int64 `json:"raisedKzt"`
		GoalKzt    int64 `json:"goalKzt"`
		Percent    int64 `json:"percent"`
		DonorCount int64 `json:"donorCount"`
	} `json:"progress"`
	RecentDonors []struct {
		Name      string `json:"name"`
		AmountKzt int64  `json:"amountKzt"`
		DonatedAt string `json:"donatedAt"`
	} `json:"recentDonors"`
}

// charityDonation is the answer to a donation.
type charityDonation struct {
	DonationID       string `json:"donationId"`
	LedgerEntryID    string `json:"ledgerEntryId"`
	TransactionID    string `json:"transactionId"`
	CampaignTotalKzt int64  `json:"campaignTotalKzt"`
	ThankYouURL      string `json:"thankYouUrl"`
}

// charityActiveCampaign proposes a campaign as proposer and approves it as
// the charity admin.
func charityActiveCampaign(t testing.TB, p *harness.Platform, proposer harness.User, category string, goal int64) charityCampaign {
	t.Helper()
	r := p.Post(t, "/api/charity/campaigns", proposer.Token, map[string]any{"title": "Wells for " + category,
		"description": "Clean water", "category": category, "goalKzt": goal})
	if r.Status != http.StatusCreated {
		t.Fatalf("create campaign: %d %s", r.Status, r.Body)
	}
	var c charityCampaign
	r.Decode(t, &c)
	admin := p.RegisterEmail(t, harness.CharityAdminEmail)
	if a := p.Post(t, "/api/charity/campaigns/"+c.ID+"/approve", admin.Token, map[string]any{}); a.Status != http.StatusOK {
		t.Fatalf("approve campaign: %d %s", a.Status, a.Body)
	}
	return c
}

func charityGet(t testing.TB, p *harness.Platform, id, token string) charityCampaign {
	t.Helper()
	r := p.Get(t, "/api/charity/campaigns/"+id, token)
	if r.Status != http.StatusOK {
		t.Fatalf("read campaign: %d %s", r.Status, r.Body)
	}
	var c charityCampaign
	r.Decode(t, &c)
	return c
}

// charityFundedDonor registers a donor with a KZT wallet holding amount.
func charityFundedDonor(t testing.TB, p *harness.Platform, secret, prefix string, amount int64) (harness.User, string) {
	t.Helper()
	u := p.Register(t, prefix)
	w := fiatCreateWallet(t, p, u, "KZT")
	fiatDeposit(t, p, secret, u, w, amount)
	return u, w
}

// charityEvents reads events.charity from the start and returns the events
// of the campaign read once done (given all events of the campaign read so
// far) returns true.
func charityEvents(t *testing.T, p *harness.Platform, campaignID string, timeout time.Duration, done func([]schemas.Envelope) bool) []schemas.Envelope {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.KafkaAddr), kgo.ConsumeTopics("events.charity"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatalf("kafka client: %v", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var got []schemas.Envelope
	for ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			var env schemas.Envelope
			if json.Unmarshal(r.Value, &env) == nil && env.Key == campaignID {
				got = append(got, env)
			}
		})
		if done(got) {
			return got
		}
	}
	t.Fatalf("events.charity: not done within %s; %d events of %s read", timeout, len(got), campaignID)
	return nil
}

// countType counts the distinct events of a type (the relay publishes at
// least once: a record re-sent after a crash keeps its event id).
func countType(evs []schemas.Envelope, typ string) int {
	ids := map[string]bool{}
	for _, e := range evs {
		if e.Type == typ {
			ids[e.ID] = true
		}
	}
	return len(ids)
}
