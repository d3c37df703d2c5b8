package topics

import (
	"testing"

	"github.com/fintech/platform/schemas"
)

// TestCommandCatalogTopics: every topic of schemas.CommandCatalog is a
// topic the platform creates (schemas cannot import this package, so it
// spells the names; this keeps them equal).
func TestCommandCatalogTopics(t *testing.T) {
	known := map[string]bool{}
	for _, s := range All() {
		known[s.Name] = true
	}
	for _, c := range schemas.CommandCatalog() {
		if !known[c.Topic] {
			t.Errorf("CommandCatalog lists %s on %s, which topics.All does not create", c.Type, c.Topic)
		}
	}
	for got, want := range map[string]string{schemas.TopicFiatCommands: FiatCommands, schemas.TopicMaskCommands: MaskCommands,
		schemas.TopicTradeCommands: TradeCommands, schemas.TopicReputationCommands: ReputationCommands,
		schemas.TopicLedgerAppend: LedgerAppend} {
		if got != want {
			t.Errorf("schemas spells %s as %s", want, got)
		}
	}
}
