package schemas

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// TestReadAgreesWithEncodingJSON: the records' decoder (goccy/go-json) reads
// envelopes and their data exactly as encoding/json does, and refuses what
// it refuses.
func TestReadAgreesWithEncodingJSON(t *testing.T) {
	amount := int64(9_007_199_254_740_993) // above 2^53: no float on the way
	occurred := time.Date(2026, 11, 23, 17, 4, 5, 123456789, time.FixedZone("ALMT", 5*3600))
	datas := []any{
		LedgerAppend{Kind: "fiat.transfer", SourceID: "2Abcdefghijklmnopqrstuvwxyz", ActorUserID: "u1", AmountCents: &amount,
			Currency: "KZT", Meta: map[string]any{"memo": "Қазақ тілі ✓ <b>&\"quoted\"</b>", "n": -12.5, "nested": map[string]any{"a": []any{1, nil, true}}}},
		ScoreUpdated{UserID: "u2", Kind: "transfer.sent", Weight: -3, PreviousScore: 10, NewScore: 7, Promoted: false},
		map[string]any{},
		nil,
	}
	var values [][]byte
	for i, d := range datas {
		env, err := New(TypeLedgerAppend, "key", "actor", d, occurred)
		if err != nil {
			t.Fatal(err)
		}
		env.CorrelationID, env.RequestHash = "corr", "abc123"
		if i == 1 {
			env.ReplyTo = "gateway.replies"
		}
		raw, err := Encode(env)
		if err != nil {
			t.Fatal(err)
		}
		values = append(values, raw)
	}
	// Written by hand: escapes, whitespace, unknown and differently cased
	// fields, a duplicate key, and null data.
	values = append(values,
		[]byte(` { "id" : "a\u00e9\n\ud83d\ude00", "TYPE": "x", "type": "ledger.append", "schemaVersion": 1, "occurredAt": "2026-01-02T03:04:05Z",
		  "key": "k", "unknown": {"deep": [1, 2, {"x": null}]}, "data": {"kind": "k", "sourceId": "s", "actorUserId": "a", "meta": {"big": 12345678901234567890}} } `),
		[]byte(`{"id":"i","type":"t","data":null}`),
	)
	for i, v := range values {
		got, gotErr := Read(v)
		var want Envelope
		wantErr := json.Unmarshal(v, &want)
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("value %d: Read error %v, encoding/json error %v", i, gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("value %d: Read\n%#v\nencoding/json\n%#v", i, got, want)
		}
		gotData, gotErr := DataAs[LedgerAppend](got)
		var wantData LedgerAppend
		wantErr = json.Unmarshal(want.Data, &wantData)
		if (gotErr != nil) != (wantErr != nil) || !reflect.DeepEqual(gotData, wantData) {
			t.Fatalf("value %d data: DataAs %#v (%v), encoding/json %#v (%v)", i, gotData, gotErr, wantData, wantErr)
		}
	}

	for _, bad := range []string{``, `{`, `{"id":"i","type":"t","data":}`, `{"id":"i" "type":"t"}`, `[1,2]`, `{"id":1}`,
		`{"id":"i","occurredAt":"yesterday"}`, `{"id":"i","data":{"a":tru}}`, `{"id":"i"} trailing`} {
		_, gotErr := Read([]byte(bad))
		var want Envelope
		wantErr := json.Unmarshal([]byte(bad), &want)
		if (gotErr != nil) != (wantErr != nil) {
			t.Errorf("%q: Read error %v, encoding/json error %v", bad, gotErr, wantErr)
		}
	}
}

// BenchmarkRead compares the records' decoder with encoding/json on a fiat
// transfer command's envelope and data, as a consumer reads it.
func BenchmarkRead(b *testing.B) {
	env, err := New(TypeFiatTransfer, "2Abcdefghijklmnopqrstuvwxyz", "2Abcdefghijklmnopqrstuvwxy0", FiatTransfer{
		FromWalletID: "2Abcdefghijklmnopqrstuvwxyz", ToWalletID: "2Abcdefghijklmnopqrstuvwxy1",
		FromUserID: "2Abcdefghijklmnopqrstuvwxy0", ToUserID: "2Abcdefghijklmnopqrstuvwxy2", Amount: 12_345, Memo: "rent",
	}, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	env.RequestHash, env.ReplyTo, env.CorrelationID = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "gateway.replies", "gw-1"
	raw, err := Encode(env)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("goccy", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e, err := Decode(raw)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := DataAs[FiatTransfer](e); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var e Envelope
			if err := json.Unmarshal(raw, &e); err != nil {
				b.Fatal(err)
			}
			var t FiatTransfer
			if err := json.Unmarshal(e.Data, &t); err != nil {
				b.Fatal(err)
			}
		}
	})
}
