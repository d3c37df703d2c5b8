package schemas

import (
	"errors"
	"strings"
	"testing"
)

func TestCommandRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want map[string]string
	}{
		{"ledger entry ok", LedgerAppend{Kind: "k", SourceID: "s", Currency: "KZT"}.Validate(), nil},
		{"ledger entry missing and bad fields", LedgerAppend{Kind: strings.Repeat("k", LedgerMaxKind+1), Currency: "usd", EntryID: "a\x00"}.Validate(),
			map[string]string{"kind": "must be at most 64 characters", "sourceId": "is required",
				"currency": "must be an upper-case currency code such as KZT or USD", "entryId": "must not contain NUL characters"}},
		{"reputation event ok", ReputationEvent{UserID: "u", Kind: "k", SourceModule: "m", Weight: -1000}.Validate(), nil},
		{"reputation event bad", ReputationEvent{Kind: " ", Weight: 1001, SourceID: strings.Repeat("s", ReputationMaxSourceID+1)}.Validate(),
			map[string]string{"userId": "is required", "kind": "is required", "weight": "must be between -1000 and 1000",
				"sourceId": "must be at most 256 characters"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got FieldProblems
			if tt.err != nil && !errors.As(tt.err, &got) {
				t.Fatalf("error %v is not FieldProblems", tt.err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("problems %v, want %v", got, tt.want)
			}
			for field, reason := range tt.want {
				if got[field] != reason {
					t.Fatalf("%s: %q, want %q (all: %v)", field, got[field], reason, got)
				}
			}
		})
	}
}

// BenchmarkLedgerAppendValidate is the check of a valid ledger command, one
// per transfer (go test -run '^$' -bench LedgerAppendValidate -benchmem ./schemas).
func BenchmarkLedgerAppendValidate(b *testing.B) {
	amt := int64(125000)
	a := LedgerAppend{Kind: LedgerKindTransfer, SourceID: "tx_2Xj4kQ9mZ1aB3cD5eF7gH9iJ0kL", ActorUserID: "usr_2Xj4kQ9mZ1aB3cD5eF7gH9iJ0kL",
		AmountCents: &amt, Currency: "KZT"}
	b.ReportAllocs()
	for b.Loop() {
		if err := a.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}
