package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/e2e/harness"
)

// drillMonthlyCap is the pre-KYC monthly cap of the drill's platform
// (FIAT_CAP_MONTHLY): far above what the drill's other users send in a
// month, reached by the cap user's transfers after T.
const drillMonthlyCap = 200_000

// toldCmd is one keyed command of the told workload: what it was sent,
// what it was answered the first time and when replayed before the
// restore.
type toldCmd struct {
	key, path, token string
	body             []byte
	first, replay    harness.Response
}

// toldLoad is the conflicting workload after T beyond the rings: mask
// charges near a mask's limit, donations from near-empty wallets, transfers
// at the pre-KYC monthly cap. Every command is sent once with its key and
// its answer kept; snapshot replays each before the restore and reads the
// rows it made; checkTold replays each after the restore and reads them
// again: the same status and body byte for byte, the same rows, amounts,
// ledger entries and reputation.
type toldLoad struct {
	l    *drillLoad
	cmds []*toldCmd

	maskUser harness.User
	maskID   string
	campaign string
	donors   []harness.User
	donorW   []string
	capUser  harness.User
	capW     string

	rows map[string][]string // query name -> rows before the restore
}

func newToldLoad(t *testing.T, l *drillLoad) *toldLoad {
	t.Helper()
	p := l.p
	secret := fiatSecret(t, p)
	tl := &toldLoad{l: l}
	tl.maskUser = p.Register(t, "drill-mask")
	tl.maskID = createMask(t, p, tl.maskUser.Token, map[string]any{"label": "drill", "kind": "recurring", "spendLimitCents": 1_000}).ID
	proposer := p.Register(t, "drill-proposer")
	tl.campaign = charityActiveCampaign(t, p, proposer, "water", 1_000_000).ID
	// Donor 2 holds 100 and donates 500 after T, once the cap user paid it
	// 400: a credit from another partition of fiat.commands.
	for i, funds := range []int64{500, 500, 100} {
		u, w := charityFundedDonor(t, p, secret, fmt.Sprintf("drill-donor%d", i), funds)
		tl.donors, tl.donorW = append(tl.donors, u), append(tl.donorW, w)
		l.wallets, l.funded = append(l.wallets, w), l.funded+funds
	}
	tl.capUser = p.Register(t, "drill-cap")
	tl.capW = fiatCreateWallet(t, p, tl.capUser, "KZT")
	fiatDeposit(t, p, secret, tl.capUser, tl.capW, 300_000)
	l.wallets, l.funded = append(l.wallets, tl.capW), l.funded+300_000
	return tl
}

// do sends one keyed command, retried with its key while answered 5xx,
// and fails unless it is answered want with wantIn in its body.
func (tl *toldLoad) do(t *testing.T, key, path, token string, body any, want int, wantIn string) harness.Response {
	t.Helper()
	raw, _ := json.Marshal(body)
	c := &toldCmd{key: key, path: path, token: token, body: raw}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		c.first = tl.send(t, c)
		if c.first.Status < 500 || time.Now().After(deadline) {
			break
		}
	}
	if c.first.Status != want || !strings.Contains(string(c.first.Body), wantIn) {
		t.Fatalf("%s: %d %s, want %d with %q", key, c.first.Status, c.first.Body, want, wantIn)
	}
	tl.cmds = append(tl.cmds, c)
	return c.first
}

func (tl *toldLoad) send(t *testing.T, c *toldCmd) harness.Response {
	t.Helper()
	return tl.l.p.Do(t, harness.Request{Method: http.MethodPost, Path: c.path, Token: c.token, Body: c.body,
		Headers: map[string]string{"Idempotency-Key": c.key}})
}

// sendAfterT is the workload, interleaved so that the commands of one
// module follow each other on different partitions and windows.
func (tl *toldLoad) sendAfterT(t *testing.T, prefix string) {
	t.Helper()
	charge := func(n int, amount int64, want int, wantIn string) {
		ref := fmt.Sprintf("%s-charge-%d", prefix, n)
		tl.do(t, ref, "/api/mask/charges", tl.maskUser.Token, chargeBody(tl.maskID, ref, amount, "Shop", ""), want, wantIn)
	}
	donate := func(n int, amount int64, want int, wantIn string) {
		d := n % len(tl.donors)
		tl.do(t, fmt.Sprintf("%s-donate-%d", prefix, n), "/api/charity/campaigns/"+tl.campaign+"/donations", tl.donors[d].Token,
			map[string]any{"walletId": tl.donorW[d], "amountKzt": amount, "message": "drill"}, want, wantIn)
		if want == http.StatusCreated {
			tl.l.funded -= amount // now the campaign's, not a user's or the fee wallet's
		}
	}
	capTransfer := func(n int, to harness.User, amount int64, want int, wantIn string) {
		key := fmt.Sprintf("%s-cap-%d", prefix, n)
		tl.do(t, key, "/api/fiat/transfer", tl.capUser.Token,
			map[string]any{"fromWalletId": tl.capW, "toEmail": to.Email, "amountKzt": amount, "memo": key}, want, wantIn)
		if want == http.StatusOK {
			tl.l.mu.Lock()
			tl.l.acked[key] = time.Now()
			tl.l.mu.Unlock()
		}
	}
	// The mask: limit 1,000; 400 + 400 leave 200, 201 is over it, 150
	// (scored with the decline just before it) leaves 50, 51 is over it.
	// The cap user sends 150,000 + 400 of its monthly 200,000, then 1 tiyn
	// over what is left (refused), 1 under it, and 2 (refused).
	to := tl.l.users[0]
	charge(0, 400, http.StatusCreated, `"authorized"`)
	donate(0, 400, http.StatusCreated, `"donationId"`) // donor 0: 100 left (a donation has no fee)
	capTransfer(0, to, 150_000, http.StatusOK, `"`)
	charge(1, 400, http.StatusCreated, `"authorized"`)
	donate(1, 450, http.StatusCreated, `"donationId"`)
	charge(2, 201, http.StatusPaymentRequired, "limit_exceeded")
	donate(3, 101, http.StatusBadRequest, "insufficient_balance") // donor 0 again: 100 left
	capTransfer(1, tl.donors[2], 400, http.StatusOK, `"`)
	donate(2, 500, http.StatusCreated, `"donationId"`) // donor 2: 100 + the 400 just received
	capTransfer(2, to, drillMonthlyCap-150_400+1, http.StatusForbidden, "kyc_required")
	charge(3, 150, http.StatusCreated, `"authorized"`)
	capTransfer(3, to, drillMonthlyCap-150_400-1, http.StatusOK, `"`)
	charge(4, 51, http.StatusPaymentRequired, "limit_exceeded")
	donate(4, 50, http.StatusCreated, `"donationId"`) // donor 1: what 450 left
	capTransfer(4, to, 2, http.StatusForbidden, "kyc_required")
	charge(5, 50, http.StatusCreated, `"authorized"`)
}

// queries read what the workload made: rows, amounts, ledger entries
// (without height, hash and time: the chain is appended again after a
// restore) and the reputation of everyone the drill moves money for.
func (tl *toldLoad) queries(ring *ringLoad) map[string]struct {
	sql  string
	args []any
} {
	users := []string{tl.maskUser.ID, tl.capUser.ID}
	for _, u := range append(append([]harness.User{}, tl.donors...), ring.users...) {
		users = append(users, u.ID)
	}
	type q = struct {
		sql  string
		args []any
	}
	return map[string]q{
		"mask": {`SELECT id, remaining_cents, status, consumed FROM masks WHERE id = $1`, []any{tl.maskID}},
		"charges": {`SELECT id, payment_ref, amount_cents, status, decline_reason, risk_score, risk_factors::text, remaining_cents
			FROM mask_charges WHERE mask_id = $1 ORDER BY payment_ref`, []any{tl.maskID}},
		"donations": {`SELECT id, donor_user_id, wallet_id, amount_kzt, transaction_id, ledger_entry_id FROM charity_donations
			WHERE campaign_id = $1 ORDER BY id`, []any{tl.campaign}},
		"cap transfers": {`SELECT id, from_wallet, to_wallet, amount, fee, memo FROM fiat_transactions WHERE from_wallet = $1 AND kind = 'transfer' ORDER BY memo`,
			[]any{tl.capW}},
		"wallets": {`SELECT id, balance FROM fiat_wallets WHERE id = ANY($1) ORDER BY id`, []any{tl.l.wallets}},
		"ledger": {`SELECT id, kind, source_id, actor_user_id, amount_cents, currency FROM ledger_entries
			WHERE source_id IN (SELECT id FROM mask_charges WHERE mask_id = $1
				UNION SELECT id FROM charity_donations WHERE campaign_id = $2
				UNION SELECT transaction_id FROM charity_donations WHERE campaign_id = $2
				UNION SELECT id FROM fiat_transactions WHERE from_wallet = $3)
			ORDER BY kind, source_id`, []any{tl.maskID, tl.campaign, tl.capW}},
		"reputation": {`SELECT user_id, score, event_count FROM reputation_scores WHERE user_id = ANY($1) ORDER BY user_id`, []any{users}},
	}
}

// sameCharge says whether a charge's replay is its first answer but for
// idempotent (at the top and in a decline's charge) and the order of keys.
func sameCharge(first, replay []byte) bool {
	var a, b map[string]any
	if json.Unmarshal(first, &a) != nil || json.Unmarshal(replay, &b) != nil {
		return false
	}
	for _, m := range []map[string]any{a, b} {
		delete(m, "idempotent")
		if c, ok := m["charge"].(map[string]any); ok {
			delete(c, "idempotent")
		}
	}
	return reflect.DeepEqual(a, b)
}

func readRows(t *testing.T, db *pgxpool.Pool, sql string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals...))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// snapshot replays every command before the restore (a mask charge's
// replay says idempotent and answers 200 where the first said 201; the
// others answer what they answered) and reads the rows the workload made.
func (tl *toldLoad) snapshot(t *testing.T, ring *ringLoad) {
	t.Helper()
	for _, c := range tl.cmds {
		c.replay = tl.send(t, c)
		if strings.HasPrefix(c.path, "/api/mask/") {
			if c.replay.Status != c.first.Status && !(c.first.Status == http.StatusCreated && c.replay.Status == http.StatusOK) ||
				!sameCharge(c.first.Body, c.replay.Body) {
				t.Fatalf("%s: answered %d %s, replayed before the restore %d %s", c.key, c.first.Status, c.first.Body, c.replay.Status, c.replay.Body)
			}
		} else if c.replay.Status != c.first.Status || !bytes.Equal(c.replay.Body, c.first.Body) {
			t.Fatalf("%s: answered %d %s, replayed before the restore %d %s", c.key, c.first.Status, c.first.Body, c.replay.Status, c.replay.Body)
		}
	}
	db := mustPool(t, tl.l.p.DatabaseURL)
	tl.rows = map[string][]string{}
	for name, q := range tl.queries(ring) {
		tl.rows[name] = readRows(t, db, q.sql, q.args...)
	}
}

// checkTold replays every command after the restore: the same status and
// body byte for byte as before it; and the rows read by snapshot are the
// same.
func (tl *toldLoad) checkTold(t *testing.T, ring *ringLoad) string {
	t.Helper()
	refused := 0
	for _, c := range tl.cmds {
		res := tl.send(t, c)
		if res.Status != c.replay.Status || !bytes.Equal(res.Body, c.replay.Body) {
			t.Errorf("%s: answered %d %s the first time (replayed: %d %s), %d %s after the restore", c.key,
				c.first.Status, c.first.Body, c.replay.Status, c.replay.Body, res.Status, res.Body)
		}
		if c.first.Status >= 400 {
			refused++
		}
	}
	db := mustPool(t, tl.l.p.DatabaseURL)
	for name, q := range tl.queries(ring) {
		if got := readRows(t, db, q.sql, q.args...); !reflect.DeepEqual(got, tl.rows[name]) {
			t.Errorf("%s after the restore:\n%s\nbefore it:\n%s", name, strings.Join(got, "\n"), strings.Join(tl.rows[name], "\n"))
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return fmt.Sprintf("%d mask charges, donations and capped transfers (%d refused) answered as before byte for byte; "+
		"mask, charges, donations, capped transfers, %d wallets, %d ledger entries and the reputation of %d users as before",
		len(tl.cmds), refused, len(tl.rows["wallets"]), len(tl.rows["ledger"]), len(tl.rows["reputation"]))
}
