package mask_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/mask"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/storage/postgres/pgtest"
)

func TestMasksReadsAndConstraints(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	st, masks := mask.NewStore(), mask.NewMasks(pool)
	now := time.Now().UTC().Truncate(time.Microsecond)
	newMask := func(id, user, pan, status string, expires time.Time) mask.MaskRow {
		return mask.MaskRow{ID: id, UserID: user, Kind: schemas.MaskKindRecurring, Currency: "USD",
			SpendLimitCents: 1_000, RemainingCents: 1_000, VirtualPan: pan, Status: status, ExpiresAt: expires, CreatedAt: now}
	}
	save := func(ch mask.Changes) error {
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return st.Save(ctx, tx, ch) })
	}
	pan := func(c byte) string {
		b := make([]byte, 32)
		for i := range b {
			b[i] = c
		}
		return "vmask-" + string(b)
	}
	if err := save(mask.Changes{NewMasks: []mask.MaskRow{
		newMask("m1", "alice", pan('1'), "active", now.Add(time.Hour)),
		newMask("m2", "alice", pan('2'), "revoked", now.Add(time.Hour)),
		newMask("m3", "alice", pan('3'), "active", now.Add(-time.Second)),
		newMask("m4", "bob", pan('4'), "active", now.Add(time.Hour)),
		func() mask.MaskRow {
			m := newMask("m7", "alice", pan('7'), "active", now.Add(time.Hour))
			m.Kind, m.Consumed = schemas.MaskKindSingleUse, true
			return m
		}(),
	}}); err != nil {
		t.Fatal(err)
	}

	// The virtual PAN is unique; a real card number does not fit the column.
	err := save(mask.Changes{NewMasks: []mask.MaskRow{newMask("m5", "bob", pan('1'), "active", now.Add(time.Hour))}})
	if !errors.Is(postgres.Translate(err), postgres.ErrConflict) {
		t.Fatalf("duplicate PAN: %v", err)
	}
	if err := save(mask.Changes{NewMasks: []mask.MaskRow{newMask("m6", "bob", "4111111111111111", "active", now.Add(time.Hour))}}); err == nil {
		t.Fatal("a non-virtual PAN was stored")
	}
	// The balance can never go negative.
	over := newMask("m1", "alice", pan('1'), "active", now.Add(time.Hour))
	over.RemainingCents = -1
	if err := save(mask.Changes{Updated: []mask.MaskRow{over}}); err == nil {
		t.Fatal("a negative balance was stored")
	}

	if _, err := masks.Owned(ctx, "m1", "bob"); !errors.Is(err, postgres.ErrNotFound) {
		t.Fatalf("bob reads alice's mask: %v", err)
	}
	if m, err := masks.Owned(ctx, "m1", "alice"); err != nil || m.VirtualPan != pan('1') {
		t.Fatalf("owned: %+v %v", m, err)
	}
	if v := newMask("m3", "alice", pan('3'), "active", now.Add(-time.Second)).View(now); v.Status != schemas.MaskStatusExpired {
		t.Fatalf("expired mask shows %q", v.Status)
	}
	active, err := masks.ListActive(ctx, "alice", now, schemas.Position{}, 10)
	if err != nil || len(active) != 1 || active[0].ID != "m1" {
		t.Fatalf("active = %+v %v", active, err)
	}

	charge := func(id, maskID, ref, status string, amount int64, score int) mask.ChargeRow {
		return mask.ChargeRow{ID: id, MaskID: maskID, UserID: "alice", PaymentRef: ref, AmountCents: amount, Currency: "USD",
			Merchant: "Shop", Status: status, RiskScore: score, RiskFactors: []schemas.RiskFactor{{Factor: "base", Points: 5}}, CreatedAt: now}
	}
	if err := save(mask.Changes{Charges: []mask.ChargeRow{
		charge("c1", "m1", "r1", "authorized", 300, 5),
		charge("c2", "m1", "r2", "declined", 5_000, 35),
		charge("c3", "m3", "r1", "authorized", 200, 20),
	}}); err != nil {
		t.Fatal(err)
	}
	if err := save(mask.Changes{Charges: []mask.ChargeRow{charge("c4", "m1", "r1", "authorized", 1, 5)}}); !errors.Is(postgres.Translate(err), postgres.ErrConflict) {
		t.Fatalf("duplicate (mask, paymentRef): %v", err)
	}

	page, err := masks.ListCharges(ctx, "alice", "m1", schemas.Position{}, 1)
	if err != nil || len(page) != 1 || page[0].ID != "c2" || len(page[0].RiskFactors) != 1 {
		t.Fatalf("first page = %+v %v", page, err)
	}
	page, _ = masks.ListCharges(ctx, "alice", "m1", schemas.Position{At: page[0].CreatedAt, ID: page[0].ID}, 10)
	if len(page) != 1 || page[0].ID != "c1" {
		t.Fatalf("second page = %+v", page)
	}
	if all, _ := masks.ListCharges(ctx, "bob", "", schemas.Position{}, 10); len(all) != 0 {
		t.Fatalf("bob sees %+v", all)
	}

	s, err := masks.Stats(ctx, "alice", now)
	if err != nil {
		t.Fatal(err)
	}
	if s.ActiveMasks != 1 || s.Charges != 3 || s.Declined != 1 || s.TotalSpendCents != 500 || s.SpendByCurrency["USD"] != 500 || s.MeanRiskScore != 20 {
		t.Fatalf("stats = %+v", s)
	}

	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		h, err := st.History(ctx, tx, mask.HistoryRequest{
			MaskIDs: []string{"m1", "m3"}, VelocitySince: now.Add(-time.Minute), DeclineSince: now.Add(-10 * time.Minute),
			Merchants: []mask.MerchantKey{{MaskID: "m1", Merchant: "Shop"}, {MaskID: "m1", Merchant: "Other"}},
			Refs:      []mask.Ref{{MaskID: "m1", PaymentRef: "r2"}, {MaskID: "m1", PaymentRef: "nope"}},
		})
		if err != nil {
			return err
		}
		if h.RecentAuthorized["m1"] != 1 || h.RecentAuthorized["m3"] != 1 || !h.LastDecline["m1"].Equal(now) ||
			!h.LastDecline["m3"].IsZero() || !h.Seen[mask.MerchantKey{MaskID: "m1", Merchant: "Shop"}] ||
			h.Seen[mask.MerchantKey{MaskID: "m1", Merchant: "Other"}] || len(h.Existing) != 1 ||
			h.Existing[mask.Ref{MaskID: "m1", PaymentRef: "r2"}].ID != "c2" {
			t.Fatalf("history = %+v", h)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
