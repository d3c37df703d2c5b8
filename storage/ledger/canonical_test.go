package ledger

import (
	"encoding/json"
	"testing"
	"time"
)

func TestCanonicalizeJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"sorted keys", `{"b":1,"a":2,"c":{"z":1,"y":2}}`, `{"a":2,"b":1,"c":{"y":2,"z":1}}`},
		{"key order by bytes", `{"b":1,"B":2,"aa":3,"a":4,"é":5}`, `{"B":2,"a":4,"aa":3,"b":1,"é":5}`},
		{"whitespace removed", "{ \"a\" : [ 1 , 2 ,\n3 ] }", `{"a":[1,2,3]}`},
		{"integers", `{"a":0,"b":-7,"c":9223372036854775807}`, `{"a":0,"b":-7,"c":9223372036854775807}`},
		{"integral floats", `{"a":1.0,"b":1e2,"c":-0.0,"d":2.50E1}`, `{"a":1,"b":100,"c":0,"d":25}`},
		{"fractions", `{"a":0.1,"b":-2.5,"c":1.5e-7}`, `{"a":0.1,"b":-2.5,"c":1.5e-07}`},
		{"big integral", `{"a":1e21}`, `{"a":1e+21}`},
		{"unicode kept", `{"a":"héllo \u00e9 ☃ 😀"}`, `{"a":"héllo é ☃ 😀"}`},
		{"no html escaping", `{"a":"<b>&</b>"}`, `{"a":"<b>&</b>"}`},
		{"escapes", `{"a":"q\"b\\n\nt\tc\u0001"}`, `{"a":"q\"b\\n\nt\tc\u0001"}`},
		{"nested", `{"z":[{"b":null,"a":true}],"a":{"c":{"e":false,"d":"x"}}}`, `{"a":{"c":{"d":"x","e":false}},"z":[{"a":true,"b":null}]}`},
		{"empty", `{"a":{},"b":[]}`, `{"a":{},"b":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := CanonicalizeJSON([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestCanonicalGoValues(t *testing.T) {
	t.Parallel()
	got, err := Canonical(map[string]any{"b": "<x>", "a": []int{3, 1}, "n": nil})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":[3,1],"b":"<x>","n":null}`; string(got) != want {
		t.Fatalf("got %s want %s", got, want)
	}
	if _, err := CanonicalizeJSON([]byte(`{"a":1} x`)); err == nil {
		t.Fatal("trailing data accepted")
	}
}

func vectorEntry() Entry {
	amt := int64(125000)
	return Entry{Height: 1, Kind: "fiat:transfer", ActorUserID: "user-1", SourceID: "tx-1", AmountCents: &amt,
		Currency: "KZT", Meta: []byte(`{"fee":125,"memo":"rent é"}`),
		Timestamp: time.Date(2026, 11, 21, 2, 30, 0, 123456000, time.UTC), PrevHash: GenesisPrevHash}
}

// The digests below were checked independently with
// printf '%s' "salt-1<document>" | sha256sum.
func TestHashVectors(t *testing.T) {
	t.Parallel()
	e1 := vectorEntry()
	wantDoc := `{"actorUserId":"user-1","amountCents":125000,"currency":"KZT","height":1,"kind":"fiat:transfer","meta":{"fee":125,"memo":"rent é"},"prevHash":"0000000000000000000000000000000000000000000000000000000000000000","sourceId":"tx-1","timestamp":"2026-11-21T02:30:00.123456Z"}`
	if got := string(e1.HashDocument()); got != wantDoc {
		t.Fatalf("document\ngot  %s\nwant %s", got, wantDoc)
	}
	const h1 = "c44ed325b4b0d0bef23e42d3b78c6451aaa203a9b832db424c289496aa7370c0"
	if got := e1.ComputeHash("salt-1"); got != h1 {
		t.Fatalf("hash 1 = %s, want %s", got, h1)
	}
	e2 := Entry{Height: 2, Kind: "gov:decision", SourceID: "p-9",
		Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), PrevHash: h1}
	if got, want := e2.ComputeHash("salt-1"), "8012eeae4d9d661e894eeca4ceb90c8d121dc01b554536208f4a1947f61558b4"; got != want {
		t.Fatalf("hash 2 = %s, want %s", got, want)
	}
	if e1.ComputeHash("salt-2") == h1 {
		t.Fatal("the salt does not change the hash")
	}
}

// The hand-rolled encoder must match the generic canonical JSON of the same
// values, including escapes, nulls and unicode.
func TestEntryDocMatchesGenericCanonical(t *testing.T) {
	t.Parallel()
	neg := int64(-42)
	big := int64(1_000_000_000_000_000)
	tests := []Entry{
		vectorEntry(),
		{Height: 7, Kind: "mask:charge", SourceID: "c", Timestamp: time.Unix(0, 0), PrevHash: GenesisPrevHash},
		{Height: 1 << 40, Kind: `we"ird\kind`, ActorUserID: "ü\n\t\x01", SourceID: "日本", AmountCents: &neg,
			Currency: "U<S>D", Meta: []byte(`{"a":{"b":[1,2.5,"x"]},"z":null}`),
			Timestamp: time.Date(1999, 12, 31, 23, 59, 59, 999999000, time.UTC), PrevHash: "ab"},
		{Height: 3, Kind: "k", SourceID: "s", AmountCents: &big, Meta: []byte(`{}`),
			Timestamp: time.Date(2030, 6, 1, 0, 0, 0, 1000, time.FixedZone("x", 3600)), PrevHash: "p"},
	}
	for _, e := range tests {
		generic := map[string]any{
			"height": e.Height, "prevHash": e.PrevHash, "kind": e.Kind, "actorUserId": e.ActorUserID,
			"sourceId": e.SourceID, "amountCents": nil, "currency": nil, "meta": nil,
			"timestamp": e.Timestamp.UTC().Format(TimestampLayout),
		}
		if e.AmountCents != nil {
			generic["amountCents"] = *e.AmountCents
		}
		if e.Currency != "" {
			generic["currency"] = e.Currency
		}
		if e.Meta != nil {
			generic["meta"] = json.RawMessage(e.Meta)
		}
		want, err := Canonical(generic)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.HashDocument(); string(got) != string(want) {
			t.Fatalf("height %d\nfast    %s\ngeneric %s", e.Height, got, want)
		}
		h := newHasher("s")
		if got := string(h.hexHash(e.raw())); got != e.ComputeHash("s") {
			t.Fatalf("hasher %s != ComputeHash %s", got, e.ComputeHash("s"))
		}
	}
}
