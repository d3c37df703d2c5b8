package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// maskView is a mask as the API shows it.
type maskView struct {
	ID               string    `json:"id"`
	UserID           string    `json:"userId"`
	Label            string    `json:"label"`
	Kind             string    `json:"kind"`
	LockedToMerchant string    `json:"lockedToMerchant"`
	LockedToCategory string    `json:"lockedToCategory"`
	Currency         string    `json:"currency"`
	SpendLimitCents  int64     `json:"spendLimitCents"`
	RemainingCents   int64     `json:"remainingCents"`
	VirtualPan       string    `json:"virtualPan"`
	Status           string    `json:"status"`
	ExpiresAt        time.Time `json:"expiresAt"`
}

// chargeView is a charge answer: the charge itself when authorized, the
// decline (with the charge inside) when declined.
type chargeView struct {
	ID               string `json:"id"`
	MaskID           string `json:"maskId"`
	PaymentRef       string `json:"paymentRef"`
	AmountCents      int64  `json:"amountCents"`
	Merchant         string `json:"merchant"`
	MerchantCategory string `json:"merchantCategory"`
	Status           string `json:"status"`
	RiskScore        int    `json:"riskScore"`
	RiskFactors      []struct {
		Factor string `json:"factor"`
		Points int    `json:"points"`
	} `json:"riskFactors"`
	RemainingCents int64     `json:"remainingCents"`
	CreatedAt      time.Time `json:"createdAt"`
	Idempotent     bool      `json:"idempotent"`

	Error         string      `json:"error"`
	DeclineReason string      `json:"declineReason"`
	Charge        *chargeView `json:"charge"`
}

func createMask(t *testing.T, p *harness.Platform, token string, body map[string]any) maskView {
	t.Helper()
	r := p.Post(t, "/api/mask/masks", token, body)
	if r.Status != http.StatusCreated {
		t.Fatalf("create mask: %d %s", r.Status, r.Body)
	}
	var m maskView
	r.Decode(t, &m)
	return m
}

func chargeBody(maskID, ref string, amount int64, merchant, category string) map[string]any {
	return map[string]any{"maskId": maskID, "amountCents": amount, "merchant": merchant,
		"merchantCategory": category, "paymentRef": ref}
}

func postCharge(t *testing.T, p *harness.Platform, token string, body map[string]any) (harness.Response, chargeView) {
	t.Helper()
	r := p.Post(t, "/api/mask/charges", token, body)
	var c chargeView
	if r.Status == http.StatusCreated || r.Status == http.StatusOK || r.Status == http.StatusPaymentRequired {
		r.Decode(t, &c)
	}
	return r, c
}

// rawPost posts JSON from any goroutine (harness helpers fail the test and
// must stay on the test goroutine).
func rawPost(client *http.Client, url, token string, body any) (int, []byte, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(raw))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// findRecord reads topic from the start until match accepts an envelope or
// the timeout passes.
func findRecord(t *testing.T, p *harness.Platform, topic string, timeout time.Duration, match func(schemas.Envelope) bool) schemas.Envelope {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.KafkaAddr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatalf("kafka client: %v", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for ctx.Err() == nil {
		fetches := cl.PollFetches(ctx)
		var found *schemas.Envelope
		fetches.EachRecord(func(rec *kgo.Record) {
			for _, r := range topics.Expand(rec) {
				var env schemas.Envelope
				if found == nil && json.Unmarshal(r.Value, &env) == nil && match(env) {
					found = &env
				}
			}
		})
		if found != nil {
			return *found
		}
	}
	t.Fatalf("no matching record on %s within %s", topic, timeout)
	return schemas.Envelope{}
}

func futureISO(d time.Duration) string { return time.Now().Add(d).UTC().Format(time.RFC3339) }

func uniqueRef(prefix string, i int) string { return fmt.Sprintf("%s-%d", prefix, i) }

// chargeResult is the answer to a charge posted from a goroutine.
type chargeResult struct {
	status int
	view   chargeView
	err    error
}

// chargeAsync posts one charge from any goroutine.
func chargeAsync(client *http.Client, p *harness.Platform, token string, body map[string]any) chargeResult {
	status, raw, err := rawPost(client, p.BaseURL+"/api/mask/charges", token, body)
	if err != nil {
		return chargeResult{err: err}
	}
	var v chargeView
	if err := json.Unmarshal(raw, &v); err != nil {
		return chargeResult{status: status, err: err}
	}
	return chargeResult{status: status, view: v}
}
