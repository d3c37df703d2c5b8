package mask_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/consumers/mask"
	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/mask"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type fixture struct {
	t     *testing.T
	pool  *pgxpool.Pool
	h     *mask.Handler
	clock *clock
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	pool, _ := pgtest.NewDB(t)
	c := &clock{t: time.Now().UTC().Truncate(time.Microsecond)}
	h, err := mask.NewHandler(store.NewStore(), c.now)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, pool: pool, h: h, clock: c}
}

// apply runs one batch in one committed transaction, as the runner does.
func (f *fixture) apply(envs ...schemas.Envelope) []pipeline.Outcome {
	f.t.Helper()
	cmds := make([]pipeline.Command, len(envs))
	for i, e := range envs {
		cmds[i] = pipeline.Command{Env: e, Topic: topics.MaskCommands}
	}
	var out []pipeline.Outcome
	err := pgx.BeginFunc(context.Background(), f.pool, func(tx pgx.Tx) error {
		var err error
		out, err = f.h.Apply(context.Background(), tx, cmds)
		return err
	})
	if err != nil {
		f.t.Fatalf("apply: %v", err)
	}
	if len(out) != len(envs) {
		f.t.Fatalf("%d outcomes for %d commands", len(out), len(envs))
	}
	return out
}

func env(t *testing.T, typ, key, user string, data any) schemas.Envelope {
	t.Helper()
	e, err := schemas.New(typ, key, user, data, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func issueCmd(t *testing.T, user string, d schemas.MaskIssue) schemas.Envelope {
	t.Helper()
	d.MaskID, d.UserID = schemas.NewID(), user
	if d.Currency == "" {
		d.Currency = "USD"
	}
	if d.ExpiresAt.IsZero() {
		d.ExpiresAt = time.Now().Add(24 * time.Hour)
	}
	return env(t, schemas.TypeMaskIssue, d.MaskID, user, d)
}

func chargeCmd(t *testing.T, user, maskID, ref string, amount int64, merchant, category string) schemas.Envelope {
	t.Helper()
	return env(t, schemas.TypeMaskCharge, maskID, user, schemas.MaskCharge{MaskID: maskID, UserID: user,
		AmountCents: amount, Merchant: merchant, MerchantCategory: category, PaymentRef: ref})
}

func revokeCmd(t *testing.T, user, maskID string) schemas.Envelope {
	t.Helper()
	return env(t, schemas.TypeMaskRevoke, maskID, user, schemas.MaskRevoke{MaskID: maskID, UserID: user})
}

// issue creates a mask and returns it.
func (f *fixture) issue(user string, d schemas.MaskIssue) schemas.Mask {
	f.t.Helper()
	out := f.apply(issueCmd(f.t, user, d))[0]
	if out.Status != http.StatusCreated {
		f.t.Fatalf("issue: %d %s", out.Status, out.Body)
	}
	var m schemas.Mask
	if err := json.Unmarshal(out.Body, &m); err != nil {
		f.t.Fatal(err)
	}
	return m
}

type chargeBody struct {
	schemas.MaskChargeResult
	Error         string                   `json:"error"`
	DeclineReason string                   `json:"declineReason"`
	Charge        schemas.MaskChargeResult `json:"charge"`
}

func decodeCharge(t *testing.T, o pipeline.Outcome) chargeBody {
	t.Helper()
	var b chargeBody
	if err := json.Unmarshal(o.Body, &b); err != nil {
		t.Fatalf("decode %s: %v", o.Body, err)
	}
	return b
}

func (f *fixture) remaining(maskID string) int64 {
	f.t.Helper()
	var n int64
	if err := f.pool.QueryRow(context.Background(), `SELECT remaining_cents FROM masks WHERE id = $1`, maskID).Scan(&n); err != nil {
		f.t.Fatal(err)
	}
	return n
}

func emitted(o pipeline.Outcome, topic, typ string) []schemas.Envelope {
	var out []schemas.Envelope
	for _, e := range o.Emit {
		if e.Topic == topic && e.Env.Type == typ {
			out = append(out, e.Env)
		}
	}
	return out
}

var panRE = regexp.MustCompile(`^vmask-[0-9a-f]{32}$`)

func TestIssueAndAuthorize(t *testing.T) {
	f := newFixture(t)
	out := f.apply(issueCmd(t, "u1", schemas.MaskIssue{Label: "groceries", Kind: schemas.MaskKindRecurring, SpendLimitCents: 10_000}))[0]
	if out.Status != http.StatusCreated {
		t.Fatalf("issue: %d %s", out.Status, out.Body)
	}
	var m schemas.Mask
	_ = json.Unmarshal(out.Body, &m)
	if !panRE.MatchString(m.VirtualPan) || m.RemainingCents != 10_000 || m.Status != "active" || m.UserID != "u1" {
		t.Fatalf("mask = %+v", m)
	}
	if ev := emitted(out, topics.EventsMask, schemas.TypeMaskCreated); len(ev) != 1 || ev[0].Key != m.ID {
		t.Fatalf("mask.created emissions = %v", out.Emit)
	}

	out = f.apply(chargeCmd(t, "u1", m.ID, "order-1", 1_200, "Shop", "food"))[0]
	if out.Status != http.StatusCreated {
		t.Fatalf("charge: %d %s", out.Status, out.Body)
	}
	c := decodeCharge(t, out)
	// recurring + new merchant: 5 + 15.
	if c.Status != "authorized" || c.RiskScore != 20 || c.Idempotent || c.RemainingCents != 8_800 || c.PaymentRef != "order-1" {
		t.Fatalf("charge = %s", out.Body)
	}
	if got := f.remaining(m.ID); got != 8_800 {
		t.Fatalf("remaining = %d", got)
	}
	ledger := emitted(out, topics.LedgerAppend, schemas.TypeLedgerAppend)
	if len(ledger) != 1 {
		t.Fatalf("ledger emissions = %v", out.Emit)
	}
	entry, _ := schemas.DataAs[schemas.LedgerAppend](ledger[0])
	if entry.Kind != schemas.LedgerKindMaskCharge || entry.SourceID != c.ID || entry.AmountCents == nil ||
		*entry.AmountCents != 1_200 || entry.Currency != "USD" || entry.ActorUserID != "u1" {
		t.Fatalf("ledger entry = %+v", entry)
	}
	if len(emitted(out, topics.EventsMask, schemas.TypeChargeAuthorized)) != 1 {
		t.Fatalf("charge.authorized missing: %v", out.Emit)
	}

	// The merchant is known now: no new-merchant factor.
	out = f.apply(chargeCmd(t, "u1", m.ID, "order-2", 100, "Shop", "food"))[0]
	if c := decodeCharge(t, out); out.Status != http.StatusCreated || c.RiskScore != 5 {
		t.Fatalf("second charge: %d %s", out.Status, out.Body)
	}

	// A replay of (maskId, paymentRef) answers the first outcome.
	out = f.apply(chargeCmd(t, "u1", m.ID, "order-1", 1_200, "Shop", "food"))[0]
	r := decodeCharge(t, out)
	if out.Status != http.StatusOK || !r.Idempotent || r.ID != c.ID || len(out.Emit) != 0 {
		t.Fatalf("replay: %d %s", out.Status, out.Body)
	}
	if got := f.remaining(m.ID); got != 8_700 {
		t.Fatalf("remaining after replay = %d", got)
	}
}

func TestDeclineReasons(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name   string
		mask   schemas.MaskIssue
		before func(m schemas.Mask) // runs after issue, before the charge
		amount int64
		merch  string
		cat    string
		reason string
	}{
		{name: "limit_exceeded", mask: schemas.MaskIssue{Kind: schemas.MaskKindRecurring, SpendLimitCents: 1_000},
			amount: 1_001, merch: "A", reason: schemas.DeclineLimitExceeded},
		{name: "merchant_locked", mask: schemas.MaskIssue{Kind: schemas.MaskKindMerchantLocked, LockedToMerchant: "Netflix", SpendLimitCents: 10_000},
			amount: 100, merch: "Hulu", reason: schemas.DeclineMerchantLocked},
		{name: "category_locked", mask: schemas.MaskIssue{Kind: schemas.MaskKindCategoryLocked, LockedToCategory: "travel", SpendLimitCents: 10_000},
			amount: 100, merch: "A", cat: "casino", reason: schemas.DeclineCategoryLocked},
		{name: "mask_revoked", mask: schemas.MaskIssue{Kind: schemas.MaskKindRecurring, SpendLimitCents: 10_000},
			before: func(m schemas.Mask) {
				out := f.apply(revokeCmd(t, "u1", m.ID))[0]
				var v schemas.Mask
				_ = json.Unmarshal(out.Body, &v)
				if out.Status != http.StatusOK || v.Status != "revoked" {
					t.Fatalf("revoke: %d %s", out.Status, out.Body)
				}
			}, amount: 100, merch: "A", reason: schemas.DeclineMaskRevoked},
		{name: "mask_expired", mask: schemas.MaskIssue{Kind: schemas.MaskKindRecurring, SpendLimitCents: 10_000, ExpiresAt: f.clock.now().Add(time.Minute)},
			before: func(schemas.Mask) { f.clock.add(2 * time.Minute) }, amount: 100, merch: "A", reason: schemas.DeclineMaskExpired},
		{name: "single_use_consumed", mask: schemas.MaskIssue{Kind: schemas.MaskKindSingleUse, SpendLimitCents: 10_000},
			before: func(m schemas.Mask) {
				if out := f.apply(chargeCmd(t, "u1", m.ID, "first", 100, "A", "")); out[0].Status != http.StatusCreated {
					t.Fatalf("first charge: %d %s", out[0].Status, out[0].Body)
				}
			}, amount: 100, merch: "A", reason: schemas.DeclineSingleUseConsumed},
		{name: "risk_declined", mask: schemas.MaskIssue{Kind: schemas.MaskKindRecurring, SpendLimitCents: 10_000},
			// 3 authorized in the last minute and a decline: 5 + 30 + 20 +
			// 25 (half the limit) = 80.
			before: func(m schemas.Mask) {
				f.apply(
					chargeCmd(t, "u1", m.ID, "r1", 10, "A", ""),
					chargeCmd(t, "u1", m.ID, "r2", 10, "A", ""),
					chargeCmd(t, "u1", m.ID, "r3", 10, "A", ""),
					chargeCmd(t, "u1", m.ID, "r4", 100_000, "A", ""))
			}, amount: 5_000, merch: "A", reason: schemas.DeclineRiskDeclined},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := f.issue("u1", tt.mask)
			if tt.before != nil {
				tt.before(m)
			}
			left := f.remaining(m.ID)
			out := f.apply(chargeCmd(t, "u1", m.ID, "pay-"+tt.name, tt.amount, tt.merch, tt.cat))[0]
			b := decodeCharge(t, out)
			if out.Status != http.StatusPaymentRequired || b.Error != schemas.CodeChargeDeclined || b.DeclineReason != tt.reason ||
				b.Charge.Status != "declined" || b.Charge.DeclineReason != tt.reason || b.Charge.ID == "" || b.Charge.Idempotent {
				t.Fatalf("got %d %s", out.Status, out.Body)
			}
			if got := f.remaining(m.ID); got != left {
				t.Fatalf("a decline changed the balance: %d -> %d", left, got)
			}
			if len(emitted(out, topics.LedgerAppend, schemas.TypeLedgerAppend)) != 0 ||
				len(emitted(out, topics.EventsMask, schemas.TypeChargeDeclined)) != 1 {
				t.Fatalf("emissions of a decline: %v", out.Emit)
			}
			// Its replay is the same decline.
			out2 := f.apply(chargeCmd(t, "u1", m.ID, "pay-"+tt.name, tt.amount, tt.merch, tt.cat))[0]
			b2 := decodeCharge(t, out2)
			if out2.Status != http.StatusPaymentRequired || b2.Charge.ID != b.Charge.ID || !b2.Charge.Idempotent || b2.DeclineReason != tt.reason {
				t.Fatalf("replay: %d %s", out2.Status, out2.Body)
			}
		})
	}
}

func TestOwnership(t *testing.T) {
	f := newFixture(t)
	m := f.issue("owner", schemas.MaskIssue{Kind: schemas.MaskKindRecurring, SpendLimitCents: 1_000})
	out := f.apply(chargeCmd(t, "intruder", m.ID, "x", 10, "A", ""), revokeCmd(t, "intruder", m.ID),
		chargeCmd(t, "intruder", "no-such-mask", "x", 10, "A", ""))
	for i, o := range out {
		if o.Status != http.StatusNotFound || len(o.Emit) != 0 {
			t.Fatalf("command %d: %d %s", i, o.Status, o.Body)
		}
	}
	if got := f.remaining(m.ID); got != 1_000 {
		t.Fatalf("remaining = %d", got)
	}
}

func TestRiskFlagAndWindows(t *testing.T) {
	f := newFixture(t)
	m := f.issue("u1", schemas.MaskIssue{Kind: schemas.MaskKindMerchantLocked, LockedToMerchant: "A", SpendLimitCents: 2_000})
	flagged := func(o pipeline.Outcome) []schemas.ReputationEvent {
		var out []schemas.ReputationEvent
		for _, e := range emitted(o, topics.ReputationCommands, schemas.TypeReputationEvent) {
			ev, _ := schemas.DataAs[schemas.ReputationEvent](e)
			if e.Key != ev.UserID {
				t.Fatalf("reputation event keyed %q for user %q", e.Key, ev.UserID)
			}
			out = append(out, ev)
		}
		return out
	}
	charge := func(ref string, amount int64, merchantUser string) pipeline.Outcome {
		e := env(t, schemas.TypeMaskCharge, m.ID, "u1", schemas.MaskCharge{MaskID: m.ID, UserID: "u1",
			AmountCents: amount, Merchant: "A", PaymentRef: ref, MerchantUserID: merchantUser})
		return f.apply(e)[0]
	}
	// Three authorized charges in one batch: the third already sees two.
	outs := f.apply(chargeCmd(t, "u1", m.ID, "a1", 10, "A", ""), chargeCmd(t, "u1", m.ID, "a2", 10, "A", ""),
		chargeCmd(t, "u1", m.ID, "a3", 10, "A", ""), chargeCmd(t, "u1", m.ID, "a4", 970, "A", ""))
	for i, want := range []int{5, 5, 5, 35} {
		if c := decodeCharge(t, outs[i]); c.RiskScore != want {
			t.Fatalf("charge %d score %d, want %d", i, c.RiskScore, want)
		}
	}
	// A decline (lock) now adds the recent-decline factor to the next ones.
	if o := f.apply(chargeCmd(t, "u1", m.ID, "locked", 10, "B", ""))[0]; decodeCharge(t, o).DeclineReason != schemas.DeclineMerchantLocked {
		t.Fatalf("lock: %s", o.Body)
	}
	// 1000 left; 900 is exactly 90% of it: 5 + 15 + 30 + 20 = 70 → flagged,
	// authorized, since merchant-user holds an active merchant key.
	if _, err := f.pool.Exec(context.Background(), `INSERT INTO fiat_merchant_keys (id, user_id, key_hash, key_prefix, created_at)
VALUES ('k1', 'merchant-user', 'h1', 'p', now())`); err != nil {
		t.Fatal(err)
	}
	o := charge("flag", 900, "merchant-user")
	if c := decodeCharge(t, o); o.Status != http.StatusCreated || c.RiskScore != 70 {
		t.Fatalf("flag charge: %d %s", o.Status, o.Body)
	}
	if evs := flagged(o); len(evs) != 1 || evs[0].Weight != -2 || evs[0].Kind != schemas.RepKindMaskRiskFlag || evs[0].UserID != "merchant-user" {
		t.Fatalf("flag events = %+v", evs)
	}
	// Same score without merchantUserId (90 of 100 left): nobody to flag.
	if o := charge("flag-anon", 90, ""); decodeCharge(t, o).RiskScore != 70 || len(flagged(o)) != 0 {
		t.Fatalf("anonymous flag: %s %v", o.Body, o.Emit)
	}
	// 61 s later the velocity factor is gone; the decline is still recent.
	f.clock.add(61 * time.Second)
	if o := charge("later", 1, ""); decodeCharge(t, o).RiskScore != 25 {
		t.Fatalf("after the velocity window: %s", o.Body)
	}
	// 10 minutes after the decline it is no longer recent.
	f.clock.add(10 * time.Minute)
	if o := charge("much-later", 1, ""); decodeCharge(t, o).RiskScore != 5 {
		t.Fatalf("after the decline window: %s", o.Body)
	}
}

// TestHotMaskBatch decides many charges of one mask in one batch: exactly
// the limit's worth are authorized, in order, and the balance ends at zero.
func TestHotMaskBatch(t *testing.T) {
	f := newFixture(t)
	m := f.issue("u1", schemas.MaskIssue{Kind: schemas.MaskKindCategoryLocked, LockedToCategory: "c", SpendLimitCents: 50 * 100})
	var cmds []schemas.Envelope
	for i := range 200 {
		cmds = append(cmds, chargeCmd(t, "u1", m.ID, "ref-"+string(rune('A'+i/26))+string(rune('a'+i%26)), 100, "shop", "c"))
	}
	outs := f.apply(cmds...)
	authorized := 0
	for i, o := range outs {
		c := decodeCharge(t, o)
		switch {
		case i < 50 && o.Status == http.StatusCreated:
			authorized++
			if c.RemainingCents != int64(5_000-100*(i+1)) {
				t.Fatalf("charge %d remaining %d", i, c.RemainingCents)
			}
		case i >= 50 && o.Status == http.StatusPaymentRequired && c.DeclineReason == schemas.DeclineLimitExceeded:
		default:
			t.Fatalf("charge %d: %d %s", i, o.Status, o.Body)
		}
	}
	if authorized != 50 || f.remaining(m.ID) != 0 {
		t.Fatalf("authorized %d, remaining %d", authorized, f.remaining(m.ID))
	}
}

// TestReappliedChargeMintsTheSameIDs: a charge applied again (after a
// restore, re-read from its topic) mints the charge id and the event ids —
// mask event, ledger entry — it minted the first time, so the ledger,
// webhooks and analytics see the same records, not new ones.
func TestReappliedChargeMintsTheSameIDs(t *testing.T) {
	f := newFixture(t)
	m := f.issue("u1", schemas.MaskIssue{Label: "groceries", Kind: schemas.MaskKindRecurring, SpendLimitCents: 10_000})
	charge := chargeCmd(t, "u1", m.ID, "order-1", 1_200, "Shop", "food")
	ids := func() []string {
		t.Helper()
		ctx := context.Background()
		tx, err := f.pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }() // the restore: this application is lost
		out, err := f.h.Apply(ctx, tx, []pipeline.Command{{Env: charge, Topic: topics.MaskCommands}})
		if err != nil {
			t.Fatal(err)
		}
		got := []string{decodeCharge(t, out[0]).ID}
		for _, e := range out[0].Emit {
			got = append(got, e.Env.ID)
		}
		return got
	}
	first, again := ids(), ids()
	if fmt.Sprint(first) != fmt.Sprint(again) || len(first) < 3 {
		t.Fatalf("re-applied charge minted %v, the first application %v: want the same charge and event ids", again, first)
	}
}
