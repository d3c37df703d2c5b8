package webhooks

import "testing"

// TestCatalogMarksTheOldTransferNames: transfer events carry the REST
// names (transactionId, fromWalletId, toWalletId, memo) and the currency
// beside the spec's, which the catalog marks deprecated.
func TestCatalogMarksTheOldTransferNames(t *testing.T) {
	t.Parallel()
	cat, err := BuildCatalog()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ current, deprecated []string }{
		"transfer.completed": {[]string{"transactionId", "fromWalletId", "toWalletId", "memo", "currency", "amountKzt"}, []string{"txId", "fromWallet", "toWallet", "description"}},
		"transfer.failed":    {[]string{"fromWalletId", "toWalletId", "memo", "currency", "reason"}, []string{"fromWallet", "toWallet", "description"}},
	}
	for _, e := range cat.Items {
		w, ok := want[e.Type]
		if !ok {
			continue
		}
		delete(want, e.Type)
		props, _ := e.DataSchema["properties"].(map[string]any)
		for _, name := range w.current {
			p, ok := props[name].(map[string]any)
			if !ok || p["deprecated"] == true {
				t.Errorf("%s: %s missing or deprecated: %v", e.Type, name, props[name])
			}
		}
		for _, name := range w.deprecated {
			if p, ok := props[name].(map[string]any); !ok || p["deprecated"] != true {
				t.Errorf("%s: %s not marked deprecated: %v", e.Type, name, props[name])
			}
		}
	}
	if len(want) > 0 {
		t.Fatalf("not in the catalog: %v", want)
	}
}
