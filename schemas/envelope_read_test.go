package schemas

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"reflect"
	"strings"
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

// TestNewWritesWhatEncodingJSONWrites: New encodes record data with
// goccy/go-json; for the payloads on the money path, filled with random
// values (every kind of field, omitted and set; strings with HTML
// characters, U+2028, control bytes and invalid UTF-8; times in other zones;
// raw JSON with spaces), and for random untyped values, it writes the same
// bytes encoding/json writes.
func TestNewWritesWhatEncodingJSONWrites(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	payloads := []reflect.Type{
		reflect.TypeOf(FiatTransfer{}), reflect.TypeOf(LedgerAppend{}), reflect.TypeOf(LedgerEntry{}),
		reflect.TypeOf(ReputationEvent{}), reflect.TypeOf(ScoreUpdated{}), reflect.TypeOf(RankPromoted{}),
		reflect.TypeOf(TransferFailed{}), reflect.TypeOf(Reply{}), reflect.TypeOf(FiatTransaction{}),
	}
	check := func(v any) {
		t.Helper()
		want, wantErr := json.Marshal(v)
		env, err := New(TypeLedgerAppend, "k", "a", v, time.Now())
		if (err != nil) != (wantErr != nil) || err == nil && !bytes.Equal(env.Data, want) {
			t.Fatalf("%T:\n New           %s (%v)\n encoding/json %s (%v)", v, env.Data, err, want, wantErr)
		}
	}
	for _, typ := range payloads {
		for range 500 {
			p := reflect.New(typ)
			fill(r, p.Elem(), 0)
			check(p.Elem().Interface())
		}
	}
	for range 5000 {
		check(randomValue(r, 0))
	}
}

var (
	timeType = reflect.TypeOf(time.Time{})
	rawType  = reflect.TypeOf(json.RawMessage{})
)

// fill sets v's exported fields to random values, leaving some zero.
func fill(r *rand.Rand, v reflect.Value, depth int) {
	if !v.CanSet() || r.Intn(6) == 0 || depth > 4 {
		return
	}
	switch t := v.Type(); {
	case t == timeType:
		v.Set(reflect.ValueOf(time.Unix(r.Int63n(4e9), r.Int63n(1e9)).In(time.FixedZone("X", r.Intn(20)*1800-36000))))
	case t == rawType:
		v.Set(reflect.ValueOf(json.RawMessage(`{"b": [1, 2,  3], "a":"<x>"}`)))
	case t.Kind() == reflect.String:
		v.SetString(randomString(r))
	case t.Kind() == reflect.Bool:
		v.SetBool(r.Intn(2) == 0)
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		v.SetInt(r.Int63n(1<<62) - r.Int63n(1<<62)>>uint(r.Intn(60)))
	case t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64:
		v.SetUint(uint64(r.Int63n(255)))
	case t.Kind() == reflect.Float64 || t.Kind() == reflect.Float32:
		v.SetFloat(r.NormFloat64() * 1e6)
	case t.Kind() == reflect.Pointer:
		p := reflect.New(t.Elem())
		fill(r, p.Elem(), depth+1)
		v.Set(p)
	case t.Kind() == reflect.Slice:
		n := r.Intn(3)
		s := reflect.MakeSlice(t, n, n)
		for i := range n {
			fill(r, s.Index(i), depth+1)
		}
		v.Set(s)
	case t.Kind() == reflect.Map:
		m := reflect.MakeMap(t)
		for range r.Intn(3) {
			k, e := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
			fill(r, k, depth+1)
			fill(r, e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case t.Kind() == reflect.Interface:
		if x := randomValue(r, depth); x != nil {
			v.Set(reflect.ValueOf(x))
		}
	case t.Kind() == reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				fill(r, v.Field(i), depth+1)
			}
		}
	}
}

// randomValue is a random untyped JSON-ish value: maps, slices, integers,
// floats, booleans, nil, raw JSON, times and strings.
func randomValue(r *rand.Rand, depth int) any {
	switch k := r.Intn(9); {
	case k == 0 && depth < 4:
		m := map[string]any{}
		for range r.Intn(5) {
			m[randomString(r)] = randomValue(r, depth+1)
		}
		return m
	case k == 1 && depth < 4:
		var a []any
		for range r.Intn(4) {
			a = append(a, randomValue(r, depth+1))
		}
		return a
	case k == 2:
		return r.Int63() - r.Int63()
	case k == 3:
		return r.NormFloat64() * float64(r.Int63n(1e12))
	case k == 4:
		return r.Intn(2) == 0
	case k == 5:
		return nil
	case k == 6:
		return json.RawMessage(`{"b": [1, 2,  3], "a":"x"}`)
	case k == 7:
		return time.Unix(r.Int63n(4e9), r.Int63n(1e9)).UTC()
	default:
		return randomString(r)
	}
}

func randomString(r *rand.Rand) string {
	pieces := []string{"a", "Z", "<", ">", "&", `"`, `\`, "\u2028", "\u2029", "é", "Қ", "😀", "\x00", "\x1f", "\xff", "\xc3", " ", "\n", "\t", "/"}
	var b strings.Builder
	for range r.Intn(8) {
		b.WriteString(pieces[r.Intn(len(pieces))])
	}
	return b.String()
}
