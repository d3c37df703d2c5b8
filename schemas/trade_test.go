package schemas

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestParseTNU(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want int64
		err  error
	}{
		{"1", 10_000_000, nil},
		{"0.1", 1_000_000, nil},
		{"0.3", 3_000_000, nil},
		{"0.0000001", 1, nil},
		{"12.0000001", 120_000_001, nil},
		{"10000", MaxTopUp, nil},
		{"10000.0000000", MaxTopUp, nil},
		{"10000.0000001", MaxTopUp + 1, nil},
		{"1.5", 15_000_000, nil},
		{"1.50", 15_000_000, nil},
		{"100000000000", MaxTNU, nil},
		{"99999999999.9999999", MaxTNU - 1, nil},
		{"100000000000.0000001", 0, ErrTNUTooLarge},
		{"1000000000000", 0, ErrTNUTooLarge},
		{"99999999999999999999999", 0, ErrTNUTooLarge},
		{"0", 0, ErrTNUNotPositive},
		{"0.0", 0, ErrTNUNotPositive},
		{"0.0000000", 0, ErrTNUNotPositive},
		{"-0", 0, ErrTNUNotPositive},
		{"-1", 0, ErrTNUNotPositive},
		{"-0.0000001", 0, ErrTNUNotPositive},
		{"0.00000001", 0, ErrTNUPrecision},
		{"1.00000000", 0, ErrTNUPrecision},
		{"12.12345678", 0, ErrTNUPrecision},
		{"1e3", 0, ErrTNUExponent},
		{"1E3", 0, ErrTNUExponent},
		{"1.5e-1", 0, ErrTNUExponent},
		{`"1"`, 0, ErrTNUNotNumber},
		{`"0.3"`, 0, ErrTNUNotNumber},
		{"true", 0, ErrTNUNotNumber},
		{"null", 0, ErrTNUNotNumber},
		{"{}", 0, ErrTNUNotNumber},
		{"[1]", 0, ErrTNUNotNumber},
		{"", 0, ErrTNUNotNumber},
		{"-", 0, ErrTNUNotNumber},
		{"1.", 0, ErrTNUNotNumber},
		{".5", 0, ErrTNUNotNumber},
		{"01", 0, ErrTNUNotNumber},
		{"+1", 0, ErrTNUNotNumber},
		{" 1", 0, ErrTNUNotNumber},
		{"1_000", 0, ErrTNUNotNumber},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			t.Parallel()
			got, err := ParseTNU(tt.text)
			if !errors.Is(err, tt.err) || got != tt.want {
				t.Fatalf("ParseTNU(%q) = %d, %v; want %d, %v", tt.text, got, err, tt.want, tt.err)
			}
		})
	}
}

func TestFormatTNU(t *testing.T) {
	t.Parallel()
	tests := []struct {
		units int64
		want  string
	}{
		{0, "0"},
		{1, "0.0000001"},
		{10, "0.000001"},
		{1_000_000, "0.1"},
		{3_000_000, "0.3"},
		{9_999_999, "0.9999999"},
		{10_000_000, "1"},
		{10_000_001, "1.0000001"},
		{15_000_000, "1.5"},
		{120_000_001, "12.0000001"},
		{MaxTopUp, "10000"},
		{MaxTopUp + 1, "10000.0000001"},
		{MaxTNU, "100000000000"},
		{MaxTNU - 1, "99999999999.9999999"},
		{-3_000_000, "-0.3"},
		{-1, "-0.0000001"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			if got := FormatTNU(tt.units); got != tt.want {
				t.Fatalf("FormatTNU(%d) = %q, want %q", tt.units, got, tt.want)
			}
			// Every positive value round-trips through the parser exactly.
			if tt.units > 0 {
				back, err := ParseTNU(tt.want)
				if err != nil || back != tt.units {
					t.Fatalf("ParseTNU(%q) = %d, %v; want %d", tt.want, back, err, tt.units)
				}
			}
			var v TNU
			if err := json.Unmarshal([]byte(tt.want), &v); err != nil || int64(v) != tt.units {
				t.Fatalf("unmarshal %q = %d, %v", tt.want, v, err)
			}
		})
	}
}

// TestTNUExactSum proves that 0.1 + 0.2 is exactly 0.3 in units, and that
// the JSON encoding writes the exact decimal as a number.
func TestTNUExactSum(t *testing.T) {
	t.Parallel()
	a, _ := ParseTNU("0.1")
	b, _ := ParseTNU("0.2")
	if FormatTNU(a+b) != "0.3" {
		t.Fatalf("0.1 + 0.2 = %s", FormatTNU(a+b))
	}
	raw, err := json.Marshal(TradeOperation{ID: "x", Kind: TradeKindTopUp, Amount: TNU(a + b), To: "acc"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"x","kind":"topup","amount":0.3,"from":null,"to":"acc","createdAt":"0001-01-01T00:00:00Z"}`
	if string(raw) != want {
		t.Fatalf("json = %s\nwant  %s", raw, want)
	}
	// Many small amounts add up exactly (a float would drift).
	var sum int64
	for range 1_000_000 {
		sum += 1 // 0.0000001 each
	}
	if FormatTNU(sum) != "0.1" {
		t.Fatalf("sum = %s", FormatTNU(sum))
	}
}
