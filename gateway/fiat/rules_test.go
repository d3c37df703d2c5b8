package fiat

import (
	"strings"
	"testing"

	"github.com/fintech/platform/gateway/commands"
)

// TestIdempotencyRules pins how the fiat endpoints derive command ids: the
// same key of the same user on the same endpoint is the same command; any
// other combination, or no key, is a new one.
func TestIdempotencyRules(t *testing.T) {
	t.Parallel()
	base := commands.IdempotentID("u1", endpointTransfer, "k1")
	tests := []struct {
		name string
		id   string
		same bool
	}{
		{"same user, endpoint and key", commands.IdempotentID("u1", endpointTransfer, "k1"), true},
		{"other key", commands.IdempotentID("u1", endpointTransfer, "k2"), false},
		{"other user", commands.IdempotentID("u2", endpointTransfer, "k1"), false},
		{"other endpoint", commands.IdempotentID("u1", endpointWithdraw, "k1"), false},
		{"no key", commands.IdempotentID("u1", endpointTransfer, ""), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if (tt.id == base) != tt.same {
				t.Fatalf("id %s vs %s: same = %v, want %v", tt.id, base, tt.id == base, tt.same)
			}
		})
	}
	if !strings.HasPrefix(base, "idem-") {
		t.Fatalf("keyed ids must be answerable from storage: %s", base)
	}
	if commands.RequestHash([]byte(`{"a":1}`)) == commands.RequestHash([]byte(`{"a":2}`)) {
		t.Fatal("different bodies must hash differently")
	}
}

func TestCSVCell(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"rent": "rent", "=SUM(A1)": "'=SUM(A1)", "+1": "'+1", "": "", "@x": "'@x"} {
		if got := csvCell(in); got != want {
			t.Errorf("csvCell(%q) = %q, want %q", in, got, want)
		}
	}
}
