package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/segmentio/ksuid"
	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/schemas"
)

// keyedUntil posts body with key until the answer is neither a transport
// error nor a 503, or until passes; it returns the last answer.
func keyedUntil(client *http.Client, url, token, key string, body []byte, until time.Time) (int, []byte, error) {
	for {
		status, raw, err := postKeyed(client, url, token, key, body)
		if (err == nil && status != http.StatusServiceUnavailable) || time.Now().After(until) {
			return status, raw, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// nemesisDeposit creates a deposit and posts the processor's signed
// success event (its event id is the processor's idempotency), each retried
// on a 503; a credited deposit counts in the load's deposits.
func nemesisDeposit(t *testing.T, l *fiatLoad, client *http.Client, secret string, u int, amount int64, until time.Time) bool {
	body, _ := json.Marshal(map[string]any{"walletId": l.wallets[u], "amount": amount})
	status, raw, err := keyedUntil(client, l.p.BaseURL+"/api/fiat/deposit", l.users[u].Token, "dep-"+ksuid.New().String(), body, until)
	if err != nil || status != http.StatusCreated {
		t.Errorf("deposit: %d %s %v", status, raw, err)
		return false
	}
	var dep struct {
		DepositID string `json:"depositId"`
	}
	_ = json.Unmarshal(raw, &dep)
	ev := fiatEvent(t, "evt_"+ksuid.New().String(), dep.DepositID, amount, "kzt")
	for {
		signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: ev, Secret: secret})
		req, _ := http.NewRequest(http.MethodPost, l.p.BaseURL+"/api/fiat/deposit/webhook", strings.NewReader(string(ev)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Stripe-Signature", signed.Header)
		resp, err := client.Do(req)
		st := 0
		if err == nil {
			st = resp.StatusCode
			resp.Body.Close()
		}
		if st == http.StatusOK {
			l.mu.Lock()
			l.deposited += amount
			l.mu.Unlock()
			return true
		}
		if (err == nil && st != http.StatusServiceUnavailable) || time.Now().After(until) {
			t.Errorf("deposit webhook: %d %v", st, err)
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// nemesisWithdraw withdraws with an Idempotency-Key, retried on a 503; an
// acknowledged one counts in the load's withdrawals.
func nemesisWithdraw(t *testing.T, l *fiatLoad, client *http.Client, u int, amount int64, key string, until time.Time) bool {
	body, _ := json.Marshal(map[string]any{"walletId": l.wallets[u], "amount": amount, "destination": "KZ000000000000004321"})
	status, raw, err := keyedUntil(client, l.p.BaseURL+"/api/fiat/withdraw", l.users[u].Token, key, body, until)
	switch {
	case err == nil && status == http.StatusCreated:
		l.mu.Lock()
		l.withdrawn += amount
		l.mu.Unlock()
		return true
	case err == nil && status == http.StatusBadRequest && strings.Contains(string(raw), "insufficient_balance"):
		return false
	}
	t.Errorf("withdraw %s: %d %s %v", key, status, raw, err)
	return false
}

// donationLoad is a campaign, funded donors and the donations answered 201
// (by donation id, with their amounts).
type donationLoad struct {
	p      *harness.Platform
	camp   charityCampaign
	donors []harness.User
	wallet []string

	mu       sync.Mutex
	answered map[string]int64
	paid     map[string]bool
	retries  atomic.Int64
}

func newDonationLoad(t *testing.T, p *harness.Platform, secret, prefix string, n int) *donationLoad {
	t.Helper()
	l := &donationLoad{p: p, answered: map[string]int64{}, paid: map[string]bool{},
		camp: charityActiveCampaign(t, p, p.Register(t, prefix+"-organizer"), prefix, 1_000_000_000)}
	for i := 0; i < n; i++ {
		u, w := charityFundedDonor(t, p, secret, fmt.Sprintf("%s-donor-%d", prefix, i), 10_000_000)
		l.donors, l.wallet = append(l.donors, u), append(l.wallet, w)
	}
	return l
}

// send donates from donor i%n with key, retrying on a 503 or a transport
// error until answered or until passes.
func (l *donationLoad) send(t *testing.T, client *http.Client, key string, i int, until time.Time) {
	d := i % len(l.donors)
	amount := schemas.DonationReputationMinKzt + int64(i%100)
	body, _ := json.Marshal(map[string]any{"walletId": l.wallet[d], "amountKzt": amount})
	for {
		status, raw, err := postKeyed(client, l.p.BaseURL+"/api/charity/campaigns/"+l.camp.ID+"/donations", l.donors[d].Token, key, body)
		if err == nil && status == http.StatusCreated {
			var res charityDonation
			if json.Unmarshal(raw, &res) != nil || res.DonationID == "" {
				t.Errorf("donation %s answered %s", key, raw)
				return
			}
			l.mu.Lock()
			l.answered[res.DonationID] = amount
			l.paid[l.donors[d].ID] = true
			l.mu.Unlock()
			return
		}
		if (err == nil && status != http.StatusServiceUnavailable) || time.Now().After(until) {
			t.Errorf("donation %s: %d %s %v", key, status, raw, err)
			return
		}
		l.retries.Add(1)
		time.Sleep(100 * time.Millisecond)
	}
}

func (l *donationLoad) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.answered)
}

// check: the campaign's donation rows are exactly the answered donations,
// its total is their sum, each has one ledger entry, and charity-donor
// reputation was counted once per donor and day.
func (l *donationLoad) check(t *testing.T, db *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	var rows, entries int
	var raised, sum int64
	if err := db.QueryRow(ctx, `SELECT count(*), coalesce(sum(amount_kzt), 0) FROM charity_donations WHERE campaign_id = $1`, l.camp.ID).Scan(&rows, &sum); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `SELECT raised_kzt FROM charity_campaigns WHERE id = $1`, l.camp.ID).Scan(&raised); err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, a := range l.answered {
		want += a
	}
	if rows != len(l.answered) || sum != want || raised != want {
		t.Errorf("%d donation rows summing %d, campaign raised %d; %d donations answered 201 summing %d",
			rows, sum, raised, len(l.answered), want)
	}
	if err := db.QueryRow(ctx, `SELECT count(*) FROM ledger_entries WHERE kind = $1 AND source_id = ANY($2)`,
		schemas.LedgerKindDonation, keysOf(l.answered)).Scan(&entries); err != nil || entries != len(l.answered) {
		t.Errorf("%d donation ledger entries for %d donations (%v)", entries, len(l.answered), err)
	}
	var donorEvents, donorDays int
	// The donors give to this campaign only.
	if err := db.QueryRow(ctx, `SELECT (SELECT count(*) FROM reputation_events WHERE kind = $1),
		(SELECT count(DISTINCT (donor_user_id, (created_at AT TIME ZONE 'UTC')::date)) FROM charity_donations WHERE campaign_id = $2)`,
		schemas.RepKindCharityDonor, l.camp.ID).Scan(&donorEvents, &donorDays); err != nil || donorEvents != donorDays || donorDays < len(l.paid) {
		t.Errorf("%d charity-donor events for %d donors' days of one campaign (%d donors; %v)", donorEvents, donorDays, len(l.paid), err)
	}
}

// maskLoad is a few masks with limits the load never reaches, and the
// charges answered (by payment reference: authorized or declined).
type maskLoad struct {
	p     *harness.Platform
	users []harness.User
	masks []maskView

	mu      sync.Mutex
	answers map[string]chargeView // "mask/ref" -> answer
}

func newMaskLoad(t *testing.T, p *harness.Platform, n int) *maskLoad {
	t.Helper()
	l := &maskLoad{p: p, answers: map[string]chargeView{}}
	for i := 0; i < n; i++ {
		u := p.Register(t, fmt.Sprintf("nemesis-mask%d", i))
		l.users = append(l.users, u)
		l.masks = append(l.masks, createMask(t, p, u.Token, map[string]any{"kind": "merchant-locked", "lockedToMerchant": "Shop",
			"spendLimitCents": 1_000_000_000, "currency": "USD"}))
	}
	return l
}

// send charges mask i%n with ref (also the Idempotency-Key), retrying on a
// 503 until answered or until passes.
func (l *maskLoad) send(t *testing.T, client *http.Client, ref string, i int, until time.Time) {
	m := i % len(l.masks)
	body, _ := json.Marshal(chargeBody(l.masks[m].ID, ref, int64(100+i%900), "Shop", "retail"))
	status, raw, err := keyedUntil(client, l.p.BaseURL+"/api/mask/charges", l.users[m].Token, ref, body, until)
	if err != nil || (status != http.StatusCreated && status != http.StatusOK && status != http.StatusPaymentRequired) {
		t.Errorf("mask charge %s: %d %s %v", ref, status, raw, err)
		return
	}
	var v chargeView
	if json.Unmarshal(raw, &v) != nil {
		t.Errorf("mask charge %s answered %s", ref, raw)
		return
	}
	if v.Charge != nil {
		v = *v.Charge
	}
	l.mu.Lock()
	l.answers[l.masks[m].ID+"/"+ref] = v
	l.mu.Unlock()
}

func (l *maskLoad) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.answers)
}

// check: the charge rows are exactly the answered charges, each with the
// answered status, and each mask's remaining limit is its limit less its
// authorized charges.
func (l *maskLoad) check(t *testing.T, db *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	rows, err := db.Query(ctx, `SELECT mask_id, payment_ref, status, amount_cents FROM mask_charges WHERE mask_id = ANY($1)`, l.maskIDs())
	if err != nil {
		t.Fatal(err)
	}
	spent := map[string]int64{}
	seen := 0
	for rows.Next() {
		var mask, ref, status string
		var amount int64
		if err := rows.Scan(&mask, &ref, &status, &amount); err != nil {
			t.Fatal(err)
		}
		seen++
		a, ok := l.answers[mask+"/"+ref]
		if !ok || a.Status != status {
			t.Errorf("mask charge %s/%s is %s in Postgres, answered %+v", mask, ref, status, a)
		}
		if status == "authorized" {
			spent[mask] += amount
		}
	}
	rows.Close()
	if seen != len(l.answers) {
		t.Errorf("%d mask charge rows for %d answered charges", seen, len(l.answers))
	}
	for _, m := range l.masks {
		var remaining int64
		if err := db.QueryRow(ctx, `SELECT remaining_cents FROM masks WHERE id = $1`, m.ID).Scan(&remaining); err != nil {
			t.Fatal(err)
		}
		if remaining != m.SpendLimitCents-spent[m.ID] {
			t.Errorf("mask %s: remaining %d, limit %d less authorized %d = %d", m.ID, remaining, m.SpendLimitCents, spent[m.ID], m.SpendLimitCents-spent[m.ID])
		}
	}
}

func (l *maskLoad) maskIDs() []string {
	var out []string
	for _, m := range l.masks {
		out = append(out, m.ID)
	}
	return out
}
