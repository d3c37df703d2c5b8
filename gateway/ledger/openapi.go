package ledger

import (
	"net/http"

	"github.com/fintech/platform/gateway/openapi"
)

// openAPIDoc describes the ledger slice: reads are public, POST /entries
// needs a bearer token.
var openAPIDoc = openapi.Doc{
	Title:    "Ledger",
	Prefixes: []string{Prefix},
	Public:   func(method, _ string) bool { return method == http.MethodGet },
}
