package fiat

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/fintech/platform/gateway/auth"
	store "github.com/fintech/platform/storage/fiat"
)

// TestMerchantKeyFormat: merchant keys are minted by auth.MerchantKeys
// as before (mk_live_ and 32 lower-case hex digits, the hex SHA-256
// stored), and only that shape is looked up.
func TestMerchantKeyFormat(t *testing.T) {
	t.Parallel()
	plain, hash, err := auth.MerchantKeys.Mint(bytes.NewReader(bytes.Repeat([]byte{0xab}, 16)))
	if err != nil {
		t.Fatal(err)
	}
	if want := "mk_live_" + strings.Repeat("ab", 16); plain != want {
		t.Fatalf("key = %q, want %q", plain, want)
	}
	sum := sha256.Sum256([]byte(plain))
	if hex.EncodeToString(hash) != hex.EncodeToString(sum[:]) {
		t.Fatalf("hash = %x, want the SHA-256 of the key", hash)
	}
	if strings.Contains(keyDisplay(plain), plain[12:]) {
		t.Fatalf("display %q reveals the key", keyDisplay(plain))
	}
	good := "mk_live_" + strings.Repeat("0123456789abcdef", 2)
	tests := []struct {
		name string
		key  string
		want bool
	}{
		{"valid", good, true},
		{"empty", "", false},
		{"prefix only", "mk_live_", false},
		{"one digit short", good[:len(good)-1], false},
		{"one digit long", good + "a", false},
		{"upper-case hex", "mk_live_" + strings.Repeat("0123456789ABCDEF", 2), false},
		{"non-hex", "mk_live_" + strings.Repeat("z", 32), false},
		{"test prefix", "mk_test_" + strings.Repeat("0", 32), false},
		{"bearer-looking", "Bearer " + good, false},
	}
	for _, tt := range tests {
		if got := auth.MerchantKeys.WellFormed(tt.key); got != tt.want {
			t.Errorf("%s: WellFormed(%q) = %v, want %v", tt.name, tt.key, got, tt.want)
		}
	}
}

func TestRequestToken(t *testing.T) {
	t.Parallel()
	tok, err := NewRequestToken(bytes.NewReader(bytes.Repeat([]byte{0x0f}, 16)))
	if err != nil {
		t.Fatal(err)
	}
	if tok != "pr_"+strings.Repeat("0f", 16) || !validRequestToken(tok) {
		t.Fatalf("token %q", tok)
	}
	for _, bad := range []string{"", "pr_", "pr_" + strings.Repeat("0F", 16), "pr_" + strings.Repeat("0", 31), "../../etc/passwd"} {
		if validRequestToken(bad) {
			t.Errorf("validRequestToken(%q) = true", bad)
		}
	}
}

func TestReconcileDrift(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		books          store.Books
		drift, procDft int64
		ok             bool
	}{
		{"empty books", store.Books{Currency: "KZT"}, 0, 0, true},
		{"deposits only", store.Books{Currency: "KZT", ProcessorCredited: 1000, DepositsCredited: 1000, WalletBalances: 1000}, 0, 0, true},
		{"transfers and fees move inside the wallets", store.Books{Currency: "KZT", ProcessorCredited: 10_000,
			DepositsCredited: 10_000, Fees: 7, FeeWallets: 7, WalletBalances: 10_000}, 0, 0, true},
		{"withdrawals and payouts leave", store.Books{Currency: "USD", ProcessorCredited: 5000, DepositsCredited: 5000,
			Withdrawn: 1200, PaidOut: 300, WalletBalances: 3500}, 0, 0, true},
		{"balance tampered down: money missing", store.Books{Currency: "KZT", ProcessorCredited: 1000,
			DepositsCredited: 1000, WalletBalances: 900}, 100, 0, false},
		{"balance tampered up: money from nowhere", store.Books{Currency: "KZT", ProcessorCredited: 1000,
			DepositsCredited: 1000, WalletBalances: 1001}, -1, 0, false},
		{"processor charged more than the ledger credited", store.Books{Currency: "KZT", ProcessorCredited: 1500,
			DepositsCredited: 1000, WalletBalances: 1000}, 0, 500, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Reconcile(tt.books)
			if got.Drift != tt.drift || got.ProcessorDrift != tt.procDft || got.OK != tt.ok {
				t.Errorf("Reconcile = drift %d processorDrift %d ok %v, want %d %d %v",
					got.Drift, got.ProcessorDrift, got.OK, tt.drift, tt.procDft, tt.ok)
			}
			if got.ExpectedBalancesMinor-got.WalletBalancesMinor != got.Drift {
				t.Errorf("drift %d is not expected %d minus balances %d", got.Drift, got.ExpectedBalancesMinor, got.WalletBalancesMinor)
			}
		})
	}
}

func TestSignAlert(t *testing.T) {
	t.Parallel()
	body := []byte(`{"ok":false}`)
	m := hmac.New(sha256.New, []byte("s3cret"))
	m.Write([]byte("1700000000." + string(body)))
	if got, want := SignAlert("s3cret", 1700000000, body), hex.EncodeToString(m.Sum(nil)); got != want {
		t.Fatalf("SignAlert = %s, want %s", got, want)
	}
}

func TestFormatMinor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v    int64
		want string
	}{{0, "0.00"}, {5, "0.05"}, {100, "1.00"}, {123456, "1234.56"}, {-250, "-2.50"}}
	for _, tt := range tests {
		if got := FormatMinor(tt.v); got != tt.want {
			t.Errorf("FormatMinor(%d) = %q, want %q", tt.v, got, tt.want)
		}
	}
}
