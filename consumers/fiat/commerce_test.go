package fiat_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	cfiat "github.com/fintech/platform/consumers/fiat"
	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics"
)

func command(t testing.TB, typ, key string, data any) pipeline.Command {
	t.Helper()
	env, err := schemas.New(typ, key, "", data, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return pipeline.Command{Env: env, Topic: topics.FiatCommands}
}

func authorize(t testing.TB, pool *pgxpool.Pool, wallet, customer, merchant string, max int64) string {
	t.Helper()
	id := schemas.NewID()
	err := store.NewStore(pool).CreateAuthorization(context.Background(), store.Authorization{ID: id, WalletID: wallet,
		CustomerUserID: customer, MerchantUserID: merchant, MaxAmount: max, Remaining: max, CreatedAt: time.Now()},
		store.AuditRow{ID: schemas.NewID(), Action: "test", CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func request(t testing.TB, pool *pgxpool.Pool, user, wallet string, amount int64, expiresAt time.Time) string {
	t.Helper()
	id := schemas.NewID()
	err := store.NewStore(pool).CreateRequest(context.Background(), store.PaymentRequest{ID: id, Token: "pr_" + id,
		UserID: user, WalletID: wallet, Amount: amount, Currency: "KZT", MaxViews: 10, ExpiresAt: expiresAt, CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestApplyCommerceBatch applies merchant charges and request payments in
// one batch against the real schema: later commands see the in-memory
// effect of earlier ones (allowance, paid status, balances).
func TestApplyCommerceBatch(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	cust := fund(t, pool, "cust", 10_000)
	merch := fund(t, pool, "merch", 0)
	recv := fund(t, pool, "recv", 0)
	payer := fund(t, pool, "payer", 3_000)
	auth := authorize(t, pool, cust, "cust", "merch", 6_000)
	open := request(t, pool, "recv", recv, 2_000, time.Now().Add(time.Hour))
	late := request(t, pool, "recv", recv, 100, time.Now().Add(-time.Second))

	charge := func(ref string, amount int64) pipeline.Command {
		return command(t, schemas.TypeFiatMerchantCharge, cust, schemas.FiatMerchantCharge{ChargeID: schemas.NewID(),
			MerchantUserID: "merch", MerchantKeyID: "k1", MerchantWalletID: merch, CustomerWalletID: cust,
			CustomerUserID: "cust", AuthorizationID: auth, Amount: amount, PaymentRef: ref})
	}
	pay := func(req, wallet, user string) pipeline.Command {
		return command(t, schemas.TypeFiatRequestPay, wallet, schemas.FiatRequestPay{RequestID: req, PayerWalletID: wallet,
			PayerUserID: user, ReceiverWalletID: recv})
	}
	cmds := []pipeline.Command{
		charge("o-1", 4_000),        // cust 6000, merch 3996, fee 4; allowance 2000 left
		charge("o-1", 4_000),        // same ref: the original, idempotent
		charge("o-2", 2_001),        // over the allowance
		charge("o-3", 2_000),        // exactly the allowance: cust 4000, merch 5994, fee 2
		pay(open, recv, "recv"),     // own request
		pay(open, payer, "payer"),   // 2000 + 2 fee: payer 1000, recv 2000
		pay(open, payer, "payer"),   // already paid
		pay(late, payer, "payer"),   // past its time: expires now
		pay("nope", payer, "payer"), // unknown
	}
	var outs []pipeline.Outcome
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		h, err := cfiat.NewHandler(caps, time.Now, quiet)
		if err != nil {
			return err
		}
		outs, err = h.Apply(ctx, tx, cmds)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		status int
		code   string
	}{
		{201, ""}, {200, ""}, {403, schemas.CodeAuthorizationExceeds}, {201, ""},
		{400, schemas.CodeCannotPayOwnRequest}, {200, ""}, {400, schemas.CodeRequestPaid}, {400, schemas.CodeRequestExpired},
		{404, schemas.CodeRequestNotFound},
	}
	for i, w := range want {
		var body struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(outs[i].Body, &body)
		if outs[i].Status != w.status || body.Error != w.code {
			t.Errorf("command %d: %d %s, want %d %s", i, outs[i].Status, outs[i].Body, w.status, w.code)
		}
	}
	var first, replay schemas.FiatChargeResult
	_ = json.Unmarshal(outs[0].Body, &first)
	_ = json.Unmarshal(outs[1].Body, &replay)
	if !replay.Idempotent || replay.ChargeID != first.ChargeID || first.Fee != 4 || first.NetAmount != 3_996 {
		t.Fatalf("charge %s, replay %s", outs[0].Body, outs[1].Body)
	}
	for id, want := range map[string]int64{cust: 4_000, merch: 5_994, payer: 1_000 - 2, recv: 2_000, "fee-KZT": 4 + 2 + 2} {
		if got := balance(t, pool, id); got != want {
			t.Errorf("balance of %s = %d, want %d", id, got, want)
		}
	}
	if outs[0].Emit[0].Env.Type != schemas.TypeMerchantCharged || outs[5].Emit[0].Env.Type != schemas.TypeRequestPaid {
		t.Fatalf("emissions: %s, %s", outs[0].Emit[0].Env.Type, outs[5].Emit[0].Env.Type)
	}
	if len(outs[7].Emit) != 1 || outs[7].Emit[0].Env.Type != schemas.TypeRequestExpired {
		t.Fatalf("an expired pay emits request.expired, got %+v", outs[7].Emit)
	}
	var status, reason string
	var remaining int64
	if err := pool.QueryRow(ctx, `SELECT status, expired_reason FROM fiat_payment_requests WHERE id = $1`, late).Scan(&status, &reason); err != nil || status != "expired" || reason != "time" {
		t.Fatalf("late request: %s %s %v", status, reason, err)
	}
	if err := pool.QueryRow(ctx, `SELECT remaining FROM fiat_merchant_authorizations WHERE id = $1`, auth).Scan(&remaining); err != nil || remaining != 0 {
		t.Fatalf("remaining allowance %d %v", remaining, err)
	}
	var charges int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM fiat_merchant_charges WHERE merchant_user_id = 'merch'`).Scan(&charges); err != nil || charges != 2 {
		t.Fatalf("charges stored: %d %v", charges, err)
	}
}

// TestExpirer expires due requests only, with request.expired queued in
// the outbox.
func TestExpirer(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	w := fund(t, pool, "recv", 0)
	now := time.Now().UTC()
	due := request(t, pool, "recv", w, 100, now.Add(-time.Millisecond))
	notYet := request(t, pool, "recv", w, 100, now.Add(time.Hour))
	e, err := cfiat.NewExpirer(store.NewStore(pool), time.Second, func() time.Time { return now }, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := e.Once(ctx); err != nil || n != 1 {
		t.Fatalf("first round expired %d: %v", n, err)
	}
	if n, err := e.Once(ctx); err != nil || n != 0 {
		t.Fatalf("second round expired %d: %v", n, err)
	}
	for id, want := range map[string]string{due: "expired", notYet: "open"} {
		var st string
		if err := pool.QueryRow(ctx, `SELECT status FROM fiat_payment_requests WHERE id = $1`, id).Scan(&st); err != nil || st != want {
			t.Errorf("request %s: %s, want %s (%v)", id, st, want, err)
		}
	}
	// The wallet's own wallet.created is there too; one expiry event, keyed by the wallet.
	var n int
	var key string
	if err := pool.QueryRow(ctx, `SELECT count(*), min(key) FROM outbox WHERE topic = $1 AND event_type = $2`,
		topics.EventsFiat, schemas.TypeRequestExpired).Scan(&n, &key); err != nil || n != 1 || key != w {
		t.Fatalf("outbox: %d %s events keyed %s, want 1 keyed %s (%v)", n, schemas.TypeRequestExpired, key, w, err)
	}
}
