package ledger

import (
	"encoding/json"
	"math"
	"testing"

	gojson "github.com/goccy/go-json"
)

// BenchmarkCanonicalMeta is the ledger appender's work on the meta of a
// transfer's ledger command, as the command's decode hands it over
// (go test -run '^$' -bench CanonicalMeta -benchmem ./storage/ledger).
func BenchmarkCanonicalMeta(b *testing.B) {
	var meta map[string]any
	if err := gojson.Unmarshal([]byte(`{"fromWallet":"wal_2Xj4kQ9mZ1aB3cD5eF7gH9iJ0kL","toWallet":"wal_2Xj4kQ9mZ1aB3cD5eF7gH9iJ0kM","fee":125}`), &meta); err != nil {
		b.Fatal(err)
	}
	want := `{"fee":125,"fromWallet":"wal_2Xj4kQ9mZ1aB3cD5eF7gH9iJ0kL","toWallet":"wal_2Xj4kQ9mZ1aB3cD5eF7gH9iJ0kM"}`
	b.ReportAllocs()
	for b.Loop() {
		got, err := Canonical(meta)
		if err != nil || string(got) != want {
			b.Fatalf("%s, %v", got, err)
		}
	}
}

// marshalled is Canonical's path for Go values, which the decoded path
// must match byte for byte.
func marshalled(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return CanonicalizeJSON(raw)
}

var decodedSeeds = []string{
	`{"fromWallet":"w1","toWallet":"w2","fee":125}`,
	`{"n":[0,-0,1.0,1e2,0.1,-2.5,1e21,1e20,123456789012345678901234,9007199254740993,9223372036854775807,9223372036854775808,-9223372036854775809,1e-7,1e-6,5e-324,1.7976931348623157e308,1152921504606846976,0.000001234]}`,
	`{"s":"<a&b> é \u2028 \" \\ \n \t \u0001 \ud83d\ude00","nested":{"z":1,"a":[{"y":null,"b":true,"a":false}]},"e":{},"l":[]}`,
	`{"é":1,"e":2,"E":3,"":4,"a b":5}`,
	`[1,"x",null]`, `"just a string"`, `3.14`, `null`,
}

func TestCanonicalDecodedMatchesMarshalled(t *testing.T) {
	t.Parallel()
	for _, doc := range decodedSeeds {
		if !checkDecoded(t, doc) {
			t.Errorf("%s took the marshalled path", doc)
		}
	}
	// What the decoded path leaves to encoding/json.
	for _, v := range []any{
		map[string]any{"a\xff": 1.0, "a\xfe": 2.0}, // both keys become "a\ufffd"
		map[string]any{"s": "bad \xff utf-8"},
		map[string]any{"n": json.Number("1.50")},
		map[string]any{"nil map": map[string]any(nil), "nil slice": []any(nil)},
		map[string]any{"int": 3, "struct": struct{ A int }{1}},
	} {
		want, wantErr := marshalled(v)
		got, err := Canonical(v)
		if string(got) != string(want) || (err == nil) != (wantErr == nil) {
			t.Errorf("%#v: got %s (%v), marshalled %s (%v)", v, got, err, want, wantErr)
		}
	}
	if _, err := Canonical(map[string]any{"nan": math.NaN()}); err == nil {
		t.Error("NaN accepted")
	}
}

// checkDecoded compares both paths on doc as goccy (the appender's decode)
// and encoding/json (the gateway's) leave it in an any; it reports whether
// both took the decoded path.
func checkDecoded(t *testing.T, doc string) bool {
	t.Helper()
	var byGoccy, byStd any
	if gojson.Unmarshal([]byte(doc), &byGoccy) != nil || json.Unmarshal([]byte(doc), &byStd) != nil {
		return false
	}
	direct := true
	for _, v := range []any{byGoccy, byStd} {
		want, wantErr := marshalled(v)
		got, ok := appendDecoded(nil, v, 0)
		if !ok {
			direct = false
			continue // marshalled, as before
		}
		if wantErr != nil || string(got) != string(want) {
			t.Errorf("%s: decoded path %s, marshalled %s (%v)", doc, got, want, wantErr)
		}
	}
	return direct
}

func FuzzCanonicalDecoded(f *testing.F) {
	for _, s := range decodedSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) { checkDecoded(t, doc) })
}
