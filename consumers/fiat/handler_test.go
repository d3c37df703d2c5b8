package fiat_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	cfiat "github.com/fintech/platform/consumers/fiat"
	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/broker"
	"github.com/fintech/platform/topics/commandbus"
)

var (
	quiet = slog.New(slog.NewTextHandler(io.Discard, nil))
	caps  = schemas.FiatCaps{PerTransfer: 10_000_000, DailyDeposit: 50_000_000, Monthly: 100_000_000}
)

// fund creates a KZT wallet for user with balance (test setup writes the
// balance directly; the code under test never does).
func fund(t testing.TB, pool *pgxpool.Pool, user string, balance int64) string {
	t.Helper()
	ctx := context.Background()
	id := schemas.NewID()
	if err := store.NewStore(pool).CreateWallet(ctx, store.Wallet{ID: id, UserID: user, Currency: "KZT", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE fiat_wallets SET balance = $2 WHERE id = $1`, id, balance); err != nil {
		t.Fatal(err)
	}
	return id
}

func balance(t *testing.T, pool *pgxpool.Pool, id string) int64 {
	t.Helper()
	var b int64
	if err := pool.QueryRow(context.Background(), `SELECT balance FROM fiat_wallets WHERE id = $1`, id).Scan(&b); err != nil {
		t.Fatal(err)
	}
	return b
}

func transferCmd(t testing.TB, from, to, fromUser, toUser string, amount int64) pipeline.Command {
	t.Helper()
	env, err := schemas.New(schemas.TypeFiatTransfer, from, fromUser, schemas.FiatTransfer{
		FromWalletID: from, ToWalletID: to, FromUserID: fromUser, ToUserID: toUser, Amount: amount, Memo: "m"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return pipeline.Command{Env: env, Topic: topics.FiatCommands}
}

// TestApplyBatch applies one batch in which later commands depend on the
// in-memory result of earlier ones, against the real schema.
func TestApplyBatch(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	a := fund(t, pool, "ua", 10_000)
	b := fund(t, pool, "ub", 0)
	c := fund(t, pool, "uc", 0)
	frozen := fund(t, pool, "uf", 0)
	if _, err := pool.Exec(ctx, `UPDATE fiat_wallets SET status = 'frozen' WHERE id = $1`, frozen); err != nil {
		t.Fatal(err)
	}
	h, err := cfiat.NewHandler(caps, time.Now, quiet)
	if err != nil {
		t.Fatal(err)
	}
	cmds := []pipeline.Command{
		transferCmd(t, a, b, "ua", "ub", 5_000),     // a 10000 -> 4995, b 5000, fee 5
		transferCmd(t, b, c, "ub", "uc", 4_995),     // b needs 4995+5 = 5000: exactly enough
		transferCmd(t, b, c, "ub", "uc", 1),         // b is empty: insufficient
		transferCmd(t, a, frozen, "ua", "uf", 1),    // recipient frozen
		transferCmd(t, c, a, "ub", "ua", 1),         // not the owner
		transferCmd(t, a, c, "ua", "uc", 4_990),     // 4990 + 5 = 4995: exactly a's balance
		transferCmd(t, a, b, "ua", "ub", 1),         // a is empty
		transferCmd(t, c, a, "uc", "ua", 1_000_001), // c has 9985: insufficient
	}
	var outs []pipeline.Outcome
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var err error
		outs, err = h.Apply(ctx, tx, cmds)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		status int
		code   string
	}{
		{200, ""}, {200, ""}, {400, schemas.CodeInsufficientBalance}, {400, schemas.CodeWalletInactive},
		{404, schemas.CodeWalletNotFound}, {200, ""}, {400, schemas.CodeInsufficientBalance}, {400, schemas.CodeInsufficientBalance},
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
	var first schemas.FiatTransferResult
	if err := json.Unmarshal(outs[0].Body, &first); err != nil || first.FeeKzt != 5 || first.FromBalanceKzt != 4_995 || first.ToBalanceKzt != 5_000 {
		t.Fatalf("first result = %s", outs[0].Body)
	}
	// Reputation is derived from the event by the reputation applier: a
	// transfer emits two records, not four.
	if len(outs[0].Emit) != 2 {
		t.Fatalf("a transfer emits its event and its ledger entry; got %d", len(outs[0].Emit))
	}
	var data map[string]any
	ev := outs[0].Emit[0]
	if err := json.Unmarshal(ev.Env.Data, &data); err != nil || ev.Topic != topics.EventsFiat || ev.Env.Type != schemas.TypeTransferCompleted {
		t.Fatalf("first emission = %s %s %s", ev.Topic, ev.Env.Type, ev.Env.Data)
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	// The spec's names, and the REST names beside them (issue 36).
	if strings.Join(keys, ",") != "amountKzt,currency,description,feeKzt,fromWallet,fromWalletId,memo,toWallet,toWalletId,transactionId,txId" ||
		data["txId"] != first.TransactionID || data["transactionId"] != first.TransactionID || data["currency"] != "KZT" || data["memo"] != data["description"] {
		t.Fatalf("transfer.completed data = %s", ev.Env.Data)
	}
	wantEmits := []struct{ topic, typ, key string }{
		{topics.LedgerAppend, schemas.TypeLedgerAppend, ""},
	}
	for i, w := range wantEmits {
		e := outs[0].Emit[i+1]
		if e.Topic != w.topic || e.Env.Type != w.typ || e.Env.Key != w.key {
			t.Fatalf("emission %d = %s %s key %q", i+1, e.Topic, e.Env.Type, e.Env.Key)
		}
	}
	led, err := schemas.DataAs[schemas.LedgerAppend](outs[0].Emit[1].Env)
	if err != nil || led.Kind != schemas.LedgerKindTransfer || led.SourceID != first.TransactionID || *led.AmountCents != 5_000 {
		t.Fatalf("ledger entry = %+v %v", led, err)
	}
	if ev.Env.ActorUserID != "ua" {
		t.Fatalf("transfer.completed actor = %q: the sender's reputation is derived from it", ev.Env.ActorUserID)
	}
	if len(outs[2].Emit) != 1 || outs[2].Emit[0].Env.Type != schemas.TypeTransferFailed {
		t.Fatalf("a rejected transfer emits transfer.failed; got %+v", outs[2].Emit)
	}
	for id, wantBal := range map[string]int64{a: 0, b: 0, c: 4_995 + 4_990, store.FeeWalletID("KZT"): 5 + 5 + 5} {
		if got := balance(t, pool, id); got != wantBal {
			t.Errorf("balance of %s = %d, want %d", id, got, wantBal)
		}
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM fiat_transactions`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("transactions = %d (%v), want 3", n, err)
	}
}

// TestRunnerRedelivery runs the real consumer group on an embedded broker:
// a batch of commands is applied once, a redelivery of the same records
// changes nothing, and a redelivered command is answered with its stored
// reply.
func TestRunnerRedelivery(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	kafka, err := broker.Start(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer kafka.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	h, err := cfiat.NewHandler(caps, time.Now, quiet)
	if err != nil {
		t.Fatal(err)
	}
	_, wait := startRunner(t, ctx, kafka.Addrs(), pool, h)

	const users = 10
	wallets := make([]string, users)
	for i := range wallets {
		wallets[i] = fund(t, pool, "u"+string(rune('a'+i)), 100_000)
	}
	var recs []pipeline.Command
	for i := 0; i < 400; i++ {
		from, to := i%users, (i*7+3)%users
		if from == to {
			to = (to + 1) % users
		}
		recs = append(recs, transferCmd(t, wallets[from], wallets[to], "u"+string(rune('a'+from)), "u"+string(rune('a'+to)), int64(1+i*13%5_000)))
	}
	cl, err := topics.NewClient(kafka.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	prod := topics.NewProducer(cl)
	publish := func() {
		for _, c := range recs {
			rec, err := topics.Record(topics.FiatCommands, c.Env)
			if err != nil {
				t.Fatal(err)
			}
			if err := prod.PublishRecords(ctx, rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitApplied := func() {
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			var n int
			// A committed transfer's record is its transaction row; a
			// rejected one's is a processed row.
			if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM processed_commands WHERE command_type = $1)
				+ (SELECT count(*) FROM fiat_transactions WHERE kind = 'transfer')`, schemas.TypeFiatTransfer).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n == len(recs) {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatal("commands were not applied in time")
	}
	snapshot := func() (map[string]int64, int) {
		out := map[string]int64{}
		rows, err := pool.Query(ctx, `SELECT id, balance FROM fiat_wallets`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id string
			var b int64
			if err := rows.Scan(&id, &b); err != nil {
				t.Fatal(err)
			}
			out[id] = b
		}
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM fiat_transactions`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return out, n
	}

	publish()
	waitApplied()
	first, txCount := snapshot()
	var total int64
	for _, b := range first {
		total += b
	}
	if total != users*100_000 {
		t.Fatalf("money not conserved: %d", total)
	}
	if txCount == 0 || first[store.FeeWalletID("KZT")] == 0 {
		t.Fatalf("nothing applied: %d transactions", txCount)
	}

	// Redeliver every record: nothing changes.
	publish()
	var lag int64 = -1
	deadline := time.Now().Add(20 * time.Second)
	for lag != 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		lag = groupLag(t, cl)
	}
	if lag != 0 {
		t.Fatalf("redelivered records not consumed, lag %d", lag)
	}
	again, txAgain := snapshot()
	if txAgain != txCount {
		t.Fatalf("redelivery added transactions: %d -> %d", txCount, txAgain)
	}
	for id, b := range first {
		if again[id] != b {
			t.Fatalf("redelivery changed %s: %d -> %d", id, b, again[id])
		}
	}

	// A command sent again through the bus gets the stored reply.
	bus, err := commandbus.New(ctx, kafka.Addrs(), 10*time.Second, false, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	cmd := transferCmd(t, wallets[0], wallets[1], "ua", "ub", 10)
	rep1, err := bus.Send(ctx, commandbus.Command{Topic: topics.FiatCommands, Env: cmd.Env})
	if err != nil || rep1.Status != http.StatusOK || rep1.Replayed {
		t.Fatalf("first send: %+v %v", rep1, err)
	}
	rep2, err := bus.Send(ctx, commandbus.Command{Topic: topics.FiatCommands, Env: cmd.Env})
	if err != nil || !rep2.Replayed || string(rep2.Body) != string(rep1.Body) {
		t.Fatalf("second send: %+v %v", rep2, err)
	}
	changed := cmd.Env
	changed.RequestHash = "other"
	rep3, err := bus.Send(ctx, commandbus.Command{Topic: topics.FiatCommands, Env: changed})
	if err != nil || rep3.Status != http.StatusConflict {
		t.Fatalf("same id, other body: %+v %v", rep3, err)
	}

	cancel()
	wait()
}

// groupLag is how many fiat.commands records the fiat group has not committed.
func groupLag(t *testing.T, cl *kgo.Client) int64 {
	t.Helper()
	lags, err := kadm.NewClient(cl).Lag(context.Background(), topics.GroupFiat)
	if err != nil {
		t.Fatal(err)
	}
	l, ok := lags[topics.GroupFiat]
	if !ok || l.Error() != nil {
		return -1
	}
	return l.Lag.TotalByTopic()[topics.FiatCommands].Lag
}

// TestApplyCaps checks the pre-KYC caps inside a batch, and that KYC
// approval lifts them.
func TestApplyCaps(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	a := fund(t, pool, "ca", 10_000)
	b := fund(t, pool, "cb", 0)
	small := schemas.FiatCaps{PerTransfer: 100, DailyDeposit: 300, Monthly: 150}
	h, err := cfiat.NewHandler(small, time.Now, quiet)
	if err != nil {
		t.Fatal(err)
	}
	deposit := func(amount int64) pipeline.Command {
		env, err := schemas.New(schemas.TypeFiatDepositCreate, a, "ca", schemas.FiatDepositCreate{
			DepositID: schemas.NewID(), SessionID: "cs_" + schemas.NewID(), URL: "u", WalletID: a, UserID: "ca", Amount: amount}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return pipeline.Command{Env: env}
	}
	apply := func(cmds ...pipeline.Command) []int {
		var outs []pipeline.Outcome
		if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			var err error
			outs, err = h.Apply(ctx, tx, cmds)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		st := make([]int, len(outs))
		for i, o := range outs {
			st[i] = o.Status
		}
		return st
	}
	got := apply(
		transferCmd(t, a, b, "ca", "cb", 101), // over per-transfer
		transferCmd(t, a, b, "ca", "cb", 100),
		transferCmd(t, a, b, "ca", "cb", 60), // 160 > monthly 150
		deposit(300),
		deposit(1), // over the daily deposit cap
	)
	want := []int{403, 200, 403, 201, 403}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("statuses = %v, want %v", got, want)
		}
	}
	// The monthly total is stored: the next batch still sees 100 spent.
	if got := apply(transferCmd(t, a, b, "ca", "cb", 51), transferCmd(t, a, b, "ca", "cb", 50)); got[0] != 403 || got[1] != 200 {
		t.Fatalf("second batch = %v", got)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO fiat_limits (user_id, kyc_approved) VALUES ('ca', true)
		ON CONFLICT (user_id) DO UPDATE SET kyc_approved = true`); err != nil {
		t.Fatal(err)
	}
	if got := apply(transferCmd(t, a, b, "ca", "cb", 5_000), deposit(10_000)); got[0] != 200 || got[1] != 201 {
		t.Fatalf("after KYC = %v", got)
	}
}

// TestBatchStampsCommandsInOrder: the transfers of one batch are stamped a
// microsecond apart in the order they were applied, so a newest-first list
// (created_at, then id) shows them in that order although their ksuids
// share a second.
func TestBatchStampsCommandsInOrder(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	a := fund(t, pool, "ua", 1_000_000)
	b := fund(t, pool, "ub", 0)
	h, err := cfiat.NewHandler(caps, time.Now, quiet)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []pipeline.Command
	for i := 0; i < 20; i++ {
		cmds = append(cmds, transferCmd(t, a, b, "ua", "ub", int64(100+i)))
	}
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		_, err := h.Apply(ctx, tx, cmds)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, `SELECT amount FROM fiat_transactions WHERE kind = 'transfer' ORDER BY created_at DESC, id DESC`)
	if err != nil {
		t.Fatal(err)
	}
	amounts, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil || len(amounts) != 20 {
		t.Fatalf("%d transfers listed: %v", len(amounts), err)
	}
	for i, amount := range amounts {
		if want := int64(100 + 19 - i); amount != want {
			t.Fatalf("newest first, position %d: amount %d, want %d (all %v)", i, amount, want, amounts)
		}
	}
}
