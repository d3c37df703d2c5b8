package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/fintech/platform/topics"
)

// TestAnalyticsHoldNoPersonalData makes every kind of event that carries an
// e-mail address, a name, a bank destination or an anonymous donor
// (registration, a transfer by e-mail with an address in its memo, a
// withdrawal, partner royalties keyed by address, named and anonymous
// donations), waits until the sink caught up, and then searches every
// String column of every ClickHouse table: no '@' anywhere, no registered
// name in an event, and no row that names both the anonymous donor and the
// campaign or donation they gave to.
func TestAnalyticsHoldNoPersonalData(t *testing.T) {
	p := startPartnerPlatform(t, nil)
	w := newAnalyticsWorld(t, p)
	secret := fiatSecret(t, p)

	alice := verifiedUser(t, p, "pii-alice")
	bob := p.Register(t, "pii-bob")
	aw := fiatCreateWallet(t, p, alice, "KZT")
	fiatDeposit(t, p, secret, alice, aw, 5_000_000)
	if r := p.Post(t, "/api/fiat/transfer", alice.Token, map[string]any{"fromWalletId": aw, "toEmail": bob.Email,
		"amountKzt": 20_000, "memo": "rent, receipt to carol.pii@example.net"}); r.Status != http.StatusCreated && r.Status != http.StatusOK {
		t.Fatalf("transfer: %d %s", r.Status, r.Body)
	}
	if r := p.Post(t, "/api/fiat/withdraw", alice.Token, map[string]any{"walletId": aw, "amount": 5_000,
		"destination": "KZ86 125K ZT50 0410 0100"}); r.Status != http.StatusCreated {
		t.Fatalf("withdraw: %d %s", r.Status, r.Body)
	}
	stranger := uniqueEmail("pii-nobody")
	for _, email := range []string{alice.Email, stranger} {
		body := map[string]any{"eventId": uniqueID("roy"), "email": email, "productKey": "book-1", "period": "2030-01", "amount": 1500}
		wantStatus(t, "royalty", signedDelivery(t, p, rightsHook, body), http.StatusCreated)
	}
	camp := charityActiveCampaign(t, p, bob, "pii", 1_000_000)
	donor, dw := charityFundedDonor(t, p, secret, "pii-anon", 100_000)
	r := p.Post(t, "/api/charity/campaigns/"+camp.ID+"/donations", donor.Token,
		map[string]any{"walletId": dw, "amountKzt": 1500, "anonymous": true})
	if r.Status != http.StatusCreated {
		t.Fatalf("anonymous donation: %d %s", r.Status, r.Body)
	}
	var anon charityDonation
	r.Decode(t, &anon)
	if r := p.Post(t, "/api/charity/campaigns/"+camp.ID+"/donations", alice.Token,
		map[string]any{"walletId": aw, "amountKzt": 1500}); r.Status != http.StatusCreated {
		t.Fatalf("named donation: %d %s", r.Status, r.Body)
	}
	var donorID string
	if err := w.pg.QueryRow(context.Background(), `SELECT id FROM users WHERE lower(email) = lower($1)`, donor.Email).Scan(&donorID); err != nil {
		t.Fatal(err)
	}
	waitQuiet(t, p, w.pg, topics.GroupFiat, topics.GroupLedger, topics.GroupReputation, topics.GroupSink)

	ctx := context.Background()
	var sunk uint64
	if err := w.ch.QueryRow(ctx, `SELECT count() FROM `+w.db+`.events WHERE type = 'donation.received' AND
		position(data, ?) > 0`, anon.DonationID).Scan(&sunk); err != nil || sunk == 0 {
		t.Fatalf("the anonymous donation was not sunk (%d rows, %v): the test proves nothing", sunk, err)
	}

	// Every String column of every table of the platform's database.
	cols := map[string][]string{}
	rows, err := w.ch.Query(ctx, `SELECT table, name FROM system.columns WHERE database = ? AND type = 'String'`, w.db)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var table, col string
		if err := rows.Scan(&table, &col); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(table, "v_") { // views read the tables
			cols[table] = append(cols[table], col)
		}
	}
	rows.Close()
	if len(cols["events"]) == 0 {
		t.Fatalf("no events table in %s", w.db)
	}
	anyCol := func(table, needle string) string {
		var parts []string
		for _, c := range cols[table] {
			parts = append(parts, "position("+c+", '"+needle+"') > 0")
		}
		return "(" + strings.Join(parts, " OR ") + ")"
	}
	found := func(table, where string) []string {
		return rowsOfCH(t, w.ch, `SELECT `+strings.Join(cols[table], ", ")+` FROM `+w.db+`.`+table+` WHERE `+where+` LIMIT 5`)
	}
	for table := range cols {
		if got := found(table, anyCol(table, "@")); len(got) > 0 {
			t.Errorf("%s holds an e-mail address:\n%s", table, strings.Join(got, "\n"))
		}
		for _, link := range []string{camp.ID, anon.DonationID} {
			if got := found(table, anyCol(table, donorID)+" AND "+anyCol(table, link)); len(got) > 0 {
				t.Errorf("%s links the anonymous donor %s to %s:\n%s", table, donorID, link, strings.Join(got, "\n"))
			}
		}
	}
	if got := found("events", `type IN ('donation.received', 'campaign.goal_reached') AND `+anyCol("events", donorID)); len(got) > 0 {
		t.Errorf("a donation event names the anonymous donor:\n%s", strings.Join(got, "\n"))
	}
	if got := found("events", anyCol("events", "pii-alice")+" OR "+anyCol("events", "KZ86")); len(got) > 0 {
		t.Errorf("events hold a registered name or a bank destination:\n%s", strings.Join(got, "\n"))
	}
}
