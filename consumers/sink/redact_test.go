package sink

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/clickhouse"
)

func TestRedactDataDropsPersonalFields(t *testing.T) {
	cases := []struct {
		name, in string
		gone     []string
		kept     []string
	}{
		{"registration", `{"userId":"u1","email":"ann@example.com","name":"Ann Lee"}`,
			[]string{"ann@example.com", "Ann Lee", `"email"`, `"name"`}, []string{`"userId":"u1"`}},
		{"royalty", `{"id":"r1","productKey":"p","amount":100000000000001,"email":"Bob@Example.org","userId":"u2"}`,
			[]string{"Bob@Example.org"}, []string{`"amount":100000000000001`, `"productKey":"p"`}},
		{"nested and cased", `{"a":{"b":[{"ToEmail":"c@d.io","x":1}]},"Destination":"KZ12 3456"}`,
			[]string{"c@d.io", "KZ12 3456"}, []string{`"x":1`}},
		{"address in free text", `{"description":"refund to eve@mail.kz please","amountKzt":5}`,
			[]string{"eve@mail.kz"}, []string{"refund to [email] please", `"amountKzt":5`}},
		{"withdrawal", `{"withdrawalId":"w","destinationHint":"****1234","bankAccount":"KZ000"}`,
			[]string{"1234", "KZ000"}, []string{`"withdrawalId":"w"`}},
		{"no html escaping", `{"title":"a<b>&c","email":"x@y.zz"}`, []string{"x@y.zz"}, []string{`"title":"a<b>&c"`}},
		// Keys that decode or lower-case to a denied one.
		{"escaped key", `{"\u0065mail":"e@x.kz","ownerName":"Ann"}`, []string{"e@x.kz", "Ann"}, nil},
		{"escaped key, no address", `{"\u006eame":"Ann Lee","x":1}`, []string{"Ann Lee"}, []string{`"x":1`}},
		{"kelvin sign", `{"ban\u212Aaccount":"KZ000","x":1}`, []string{"KZ000"}, []string{`"x":1`}},
		{"kelvin sign raw", "{\"ban\u212aaccount\":\"KZ000\",\"x\":1}", []string{"KZ000"}, []string{`"x":1`}},
		{"dotted capital I", "{\"cl\u0130entIP\":\"10.0.0.1\",\"x\":1}", []string{"10.0.0.1"}, []string{`"x":1`}},
		{"longest key", `{"DestinationHint":"****9","BankAccountHint":"****8","x":1}`, []string{"****9", "****8"}, []string{`"x":1`}},
		// Issue 45: international addresses, phones and national ids in free text.
		{"full-width at", `{"memo":"pay ann＠mail.kz now"}`, []string{"ann＠mail.kz"}, []string{"pay [email] now"}},
		{"small commercial at", `{"memo":"to bob﹫mail.kz"}`, []string{"bob﹫mail.kz"}, []string{"to [email]"}},
		{"international address", `{"memo":"счёт для айгүл@пошта.қаз"}`, []string{"айгүл@пошта.қаз"}, []string{"счёт для [email]"}},
		{"phone in a memo", `{"memo":"call +7 (701) 234-56-78 tonight","amountKzt":5}`,
			[]string{"234-56-78", "701"}, []string{"call [number] tonight", `"amountKzt":5`}},
		{"national id", `{"description":"ИИН 900101300123, rent"}`, []string{"900101300123"}, []string{"ИИН [number], rent"}},
		{"ids and short numbers stay", `{"memo":"order tx_12345678901abc, flat 12, 2026-11-29 07:10","ref":"3MlmtXe0312345678901"}`,
			nil, []string{"tx_12345678901abc", "flat 12", "2026-11-29 07:10", "3MlmtXe0312345678901"}},
	}
	for _, c := range cases {
		got := RedactData([]byte(c.in))
		if !json.Valid([]byte(got)) {
			t.Fatalf("%s: not JSON: %s", c.name, got)
		}
		for _, g := range c.gone {
			if strings.Contains(got, g) {
				t.Errorf("%s: %q still in %s", c.name, g, got)
			}
		}
		for _, k := range c.kept {
			if !strings.Contains(got, k) {
				t.Errorf("%s: %q lost from %s", c.name, k, got)
			}
		}
	}
	for _, clean := range []string{`{"txId":"t","fromWallet":"w1","amountKzt":10}`,
		`{"memo":"Алматы ұнайды","destinationHintX":"y","nameX":1,"kind":"transfer"}`} {
		if mayHoldPersonal([]byte(clean)) {
			t.Errorf("the cheap test parses data without personal fields: %s", clean)
		}
	}
	clean := `{"txId":"t","fromWallet":"w1","amountKzt":10}`
	if got := RedactData([]byte(clean)); got != clean {
		t.Fatalf("data without personal fields changed: %s", got)
	}
}

// TestMayHoldPersonalPassesNothingASubstringTestCatches: the cheap test
// lets through no data in which the lower-cased bytes hold a quoted denied
// key (the test it replaced) or an '@'.
func TestMayHoldPersonalPassesNothingASubstringTestCatches(t *testing.T) {
	substring := func(data []byte) bool {
		if bytes.IndexByte(data, '@') >= 0 {
			return true
		}
		for k := range personalKeys {
			if bytes.Contains(bytes.ToLower(data), []byte(`"`+k+`"`)) {
				return true
			}
		}
		return false
	}
	var inputs []string
	for k := range personalKeys {
		for _, form := range []string{k, strings.ToUpper(k), strings.ToUpper(k[:1]) + k[1:]} {
			inputs = append(inputs, `{"`+form+`":"v"}`, `{"a":"`+form+`"}`, `["x","`+form+`"]`, `{"a":"","`+form+`":1}`,
				`{"a":"b""`+form+`"}`, `"`+form+`"`)
		}
	}
	inputs = append(inputs, `{"a":"x@y"}`, `@`, `""`, `"`, `{"a":"b\"name\""}`)
	for _, in := range inputs {
		if substring([]byte(in)) && !mayHoldPersonal([]byte(in)) {
			t.Errorf("the cheap test lets through %s", in)
		}
		if mayHoldPersonal([]byte(in)) != mayHoldPersonal(in) {
			t.Errorf("bytes and string disagree on %s", in)
		}
	}
}

func TestRedactRowAnonymousDonorAndEmailKey(t *testing.T) {
	now := time.Now().UTC()
	anon, _ := json.Marshal(schemas.DonationReceived{DonationID: "d1", CampaignID: "c1", AmountKzt: 100, Anonymous: true})
	named, _ := json.Marshal(schemas.DonationReceived{DonationID: "d2", CampaignID: "c1", AmountKzt: 100, DonorUserID: "donor-2"})
	score, _ := json.Marshal(schemas.ScoreUpdated{EventID: "e", UserID: "donor-1", Kind: schemas.RepKindCharityDonor,
		SourceID: "donation:c1:2026-01-01", NewScore: 4})
	rows := []clickhouse.EventRow{
		{ID: "1", Type: schemas.TypeDonationReceived, Key: "c1", ActorUserID: "donor-1", OccurredAt: now, Data: string(anon)},
		{ID: "2", Type: schemas.TypeDonationReceived, Key: "c1", ActorUserID: "donor-2", OccurredAt: now, Data: string(named)},
		{ID: "3", Type: schemas.TypeCampaignGoalReached, Key: "c1", ActorUserID: "donor-1", OccurredAt: now, Data: `{"campaignId":"c1"}`},
		{ID: "4", Type: schemas.TypeRoyaltyRecorded, Key: "ann@example.com", OccurredAt: now, Data: `{"email":"ann@example.com"}`},
		{ID: "5", Type: schemas.TypeScoreUpdated, Key: "donor-1", ActorUserID: "donor-1", OccurredAt: now, Data: string(score)},
	}
	var out []clickhouse.EventRow
	for _, r := range rows {
		out = append(out, redactRow(r))
	}
	if out[0].ActorUserID != "" || strings.Contains(out[0].Data, "donor-1") {
		t.Errorf("anonymous donation keeps its donor: %+v", out[0])
	}
	if out[1].ActorUserID != "donor-2" {
		t.Errorf("named donation lost its donor: %+v", out[1])
	}
	if out[2].ActorUserID != "" {
		t.Errorf("goal reached keeps the donor: %+v", out[2])
	}
	if out[3].Key != "" || strings.Contains(out[3].Data, "@") {
		t.Errorf("royalty keeps the address: %+v", out[3])
	}
	if strings.Contains(out[4].Data, "c1") {
		t.Errorf("charity-donor score update names the campaign: %s", out[4].Data)
	}
	// Its time is the hour's: a credit at the donation's second would name
	// the anonymous donor.
	if !out[4].OccurredAt.Equal(now.Truncate(time.Hour)) {
		t.Errorf("charity-donor score update at %s, want the hour %s", out[4].OccurredAt, now.Truncate(time.Hour))
	}
	if !out[1].OccurredAt.Equal(now) {
		t.Errorf("a donation's own time changed: %s", out[1].OccurredAt)
	}
}

// TestScrubRemovesPersonalDataAlreadySunk writes rows as the sink did
// before it redacted (e-mails, an anonymous donor, a charity-donor source)
// and checks that the one-time step leaves none of it, keeps every row, and
// does nothing the second time.
func TestScrubRemovesPersonalDataAlreadySunk(t *testing.T) {
	ctx, _, conn, db, _, _ := sinkFixture(t)
	if err := clickhouse.EnsureSchema(ctx, conn, db); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	anon, _ := json.Marshal(schemas.DonationReceived{DonationID: "d1", CampaignID: "c1", AmountKzt: 1500, Anonymous: true})
	rows := clickhouse.Rows{
		Events: []clickhouse.EventRow{
			{ID: "e1", Topic: "events.identity", Type: schemas.TypeUserRegistered, Key: "u1", ActorUserID: "u1", OccurredAt: now,
				Data: `{"userId":"u1","email":"old-1@example.com","name":"Old One"}`},
			{ID: "e2", Topic: "events.partner", Type: schemas.TypeRoyaltyRecorded, Key: "old-2@example.com", OccurredAt: now,
				Data: `{"id":"r","amount":7,"email":"old-2@example.com"}`},
			{ID: "e3", Topic: "events.charity", Type: schemas.TypeDonationReceived, Key: "c1", ActorUserID: "secret-donor",
				OccurredAt: now, Data: string(anon)},
			{ID: "e4", Topic: "events.fiat", Type: "transfer.completed", Key: "w1", ActorUserID: "u1", OccurredAt: now,
				Data: `{"txId":"t","fromWallet":"w1","amountKzt":10}`},
		},
		Reputation: []clickhouse.ReputationRow{{ID: "r1", EventID: "re1", UserID: "secret-donor",
			Kind: schemas.RepKindCharityDonor, SourceID: "donation:c1:2026-01-01", OccurredAt: now}},
	}
	if err := clickhouse.Insert(ctx, conn, db, rows); err != nil {
		t.Fatal(err)
	}
	n, err := clickhouse.ScrubEvents(ctx, conn, db, ScrubRow)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Fatalf("rewrote %d rows, want 3 (the transfer has nothing personal)", n)
	}
	count := func(q string) uint64 {
		t.Helper()
		var c uint64
		if err := conn.QueryRow(ctx, q).Scan(&c); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return c
	}
	if c := count(`SELECT count() FROM ` + db + `.events WHERE position(data, '@') > 0 OR position(key, '@') > 0
		OR position(data, 'Old One') > 0`); c != 0 {
		t.Fatalf("%d event rows still hold personal data", c)
	}
	if c := count(`SELECT count() FROM ` + db + `.events WHERE actor_user_id = 'secret-donor' OR position(data, 'secret-donor') > 0`); c != 0 {
		t.Fatalf("%d rows still name the anonymous donor", c)
	}
	if c := count(`SELECT count() FROM ` + db + `.reputation_events WHERE source_id != ''`); c != 0 {
		t.Fatalf("charity-donor source kept")
	}
	if c := count(`SELECT uniqExact(id) FROM ` + db + `.events`); c != 4 {
		t.Fatalf("%d distinct events after the scrub, want 4", c)
	}
	if c := count(`SELECT count() FROM ` + db + `.events WHERE id = 'e3' AND visitParamExtractInt(data, 'amountKzt') = 1500`); c != 1 {
		t.Fatalf("the donation's amount did not survive the scrub")
	}
	if n, err := clickhouse.ScrubEvents(ctx, conn, db, ScrubRow); err != nil || n != 0 {
		t.Fatalf("second run rewrote %d rows (%v), want none", n, err)
	}
}
