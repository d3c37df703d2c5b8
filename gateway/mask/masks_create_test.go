package mask

import (
	"testing"
	"time"

	"github.com/fintech/platform/gateway/bind"
)

func TestCreateMaskValidate(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	limit := bind.Amount{Value: 1_000, Set: true}
	tests := []struct {
		name  string
		req   createMaskRequest
		field string
	}{
		{"recurring", createMaskRequest{Kind: "recurring", SpendLimitCents: limit}, ""},
		{"single-use", createMaskRequest{Kind: "single-use", SpendLimitCents: limit, ExpiresAt: "2030-01-01T00:00:01Z"}, ""},
		{"merchant-locked", createMaskRequest{Kind: "merchant-locked", LockedToMerchant: "Shop", SpendLimitCents: limit}, ""},
		{"category-locked", createMaskRequest{Kind: "category-locked", LockedToCategory: "food", SpendLimitCents: limit}, ""},
		{"no kind", createMaskRequest{SpendLimitCents: limit}, "kind"},
		{"unknown kind", createMaskRequest{Kind: "gold", SpendLimitCents: limit}, "kind"},
		{"merchant-locked without merchant", createMaskRequest{Kind: "merchant-locked", SpendLimitCents: limit}, "lockedToMerchant"},
		{"category-locked without category", createMaskRequest{Kind: "category-locked", SpendLimitCents: limit}, "lockedToCategory"},
		{"merchant lock on a recurring mask", createMaskRequest{Kind: "recurring", LockedToMerchant: "Shop", SpendLimitCents: limit}, "lockedToMerchant"},
		{"category lock on a single-use mask", createMaskRequest{Kind: "single-use", LockedToCategory: "x", SpendLimitCents: limit}, "lockedToCategory"},
		{"no limit", createMaskRequest{Kind: "recurring"}, "spendLimitCents"},
		{"expiry now", createMaskRequest{Kind: "recurring", SpendLimitCents: limit, ExpiresAt: "2030-01-01T00:00:00Z"}, "expiresAt"},
		{"expiry not a time", createMaskRequest{Kind: "recurring", SpendLimitCents: limit, ExpiresAt: "soon"}, "expiresAt"},
		{"bad currency", createMaskRequest{Kind: "recurring", SpendLimitCents: limit, Currency: "US"}, "currency"},
		{"long label", createMaskRequest{Kind: "recurring", SpendLimitCents: limit, Label: string(make([]rune, 201))}, "label"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := bind.CheckRules(&tt.req) // the declared tags, as the server checks them
			if err == nil {
				_, err = tt.req.validate(now)
			}
			assertField(t, err, tt.field)
		})
	}
}

func TestCreateMaskDefaults(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	d, err := createMaskRequest{Kind: " recurring ", Currency: "usd", SpendLimitCents: bind.Amount{Value: 5, Set: true}}.validate(now)
	if err != nil {
		t.Fatal(err)
	}
	if d.Kind != "recurring" || d.Currency != "USD" || !d.ExpiresAt.Equal(now.Add(DefaultLifetime)) || d.SpendLimitCents != 5 {
		t.Fatalf("defaults = %+v", d)
	}
	d, _ = createMaskRequest{Kind: "recurring", SpendLimitCents: bind.Amount{Value: 5, Set: true}}.validate(now)
	if d.Currency != DefaultCurrency {
		t.Fatalf("currency = %q", d.Currency)
	}
}
