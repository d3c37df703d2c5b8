package ledger

import (
	"net/http"

	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/schemas"
)

// Field limits of an append, as the ledger appender enforces them.
const (
	docMaxKind     = schemas.LedgerMaxKind
	docMaxSourceID = schemas.LedgerMaxSourceID
)

// openAPIDoc describes the ledger slice: reads are public, POST /entries
// needs a bearer token.
var openAPIDoc = openapi.Doc{
	Title:       "Ledger",
	Description: "An append-only, hash-chained journal of platform events; every entry links to the hash of the one before it.",
	Prefixes:    []string{Prefix},
	Public:      func(method, _ string) bool { return method == http.MethodGet },
	Bodies:      map[string]string{"POST " + Prefix + "/entries": "AppendRequest"},
	Responses:   responsesFor,
	Schemas:     componentSchemas,
}

// responsesFor documents the answers of one operation.
func responsesFor(method, path string) map[string]any {
	ok, errResp := openapi.Answer, openapi.ErrorAnswer
	out := map[string]any{}
	switch method + " " + path {
	case "GET " + Prefix + "/health":
		out["200"] = ok("liveness, the chain height and the last entry's time", "Health")
		out["503"] = openapi.Degraded()
	case "GET " + Prefix + "/openapi.json":
		out["200"] = map[string]any{"description": "this document", "content": openapi.JSONContent(map[string]any{"type": "object"})}
	case "POST " + Prefix + "/entries":
		out["201"] = ok("the appended entry", "Entry")
		out["200"] = ok("replay: the entry this (kind, sourceId) already has", "Entry")
		out["403"] = errResp("forbidden: the kind is emitted by a platform module")
		out["409"] = errResp("entry_exists or idempotency_key_reused")
	case "GET " + Prefix + "/entries":
		out["200"] = map[string]any{"description": "entries in chain order", "content": openapi.JSONContent(openapi.ListOf("Entry"))}
	case "GET " + Prefix + "/entries/:id":
		out["200"] = ok("the entry with its chain context", "EntryWithChain")
	case "GET " + Prefix + "/chain/head":
		out["200"] = ok("the chain head", "Head")
	case "GET " + Prefix + "/chain/verify":
		out["200"] = ok("the result of walking the chain", "VerifyResult")
	case "GET " + Prefix + "/stats":
		out["200"] = ok("rolling entry counts from the analytics copy", "Stats")
	}
	return out
}

var (
	nullStr   = map[string]any{"type": "string", "nullable": true}
	nullInt   = map[string]any{"type": "integer", "format": "int64", "nullable": true}
	windows   = openapi.Obj([]string{"24h", "7d", "30d"}, map[string]any{"24h": openapi.Int64, "7d": openapi.Int64, "30d": openapi.Int64})
	entryProp = map[string]any{
		"id": openapi.KSUID, "height": openapi.Int64, "kind": openapi.Str, "actorUserId": openapi.Str, "sourceId": openapi.Str,
		"amountCents": map[string]any{"type": "integer", "format": "int64", "nullable": true, "description": "integer minor units"},
		"currency":    nullStr,
		"meta":        map[string]any{"type": "object", "nullable": true, "additionalProperties": true},
		"timestamp":   map[string]any{"type": "string", "format": "date-time"},
		"prevHash":    openapi.Str, "hash": openapi.Str,
	}
	entryRequired = []string{"id", "height", "kind", "actorUserId", "sourceId", "amountCents", "currency", "meta", "timestamp", "prevHash", "hash"}
)

func entryWithChain() map[string]any {
	props := map[string]any{"chain": openapi.Obj([]string{"previousId", "previousHash", "nextId", "nextHash", "linked"}, map[string]any{
		"previousId": nullStr, "previousHash": openapi.Str, "nextId": nullStr, "nextHash": nullStr, "linked": openapi.Bool,
	})}
	for k, v := range entryProp {
		props[k] = v
	}
	return openapi.Obj(append([]string{"chain"}, entryRequired...), props)
}

var componentSchemas = map[string]any{
	"AppendRequest": openapi.Obj([]string{"kind", "sourceId"}, map[string]any{
		"kind":        openapi.Text(docMaxKind),
		"sourceId":    openapi.Text(docMaxSourceID),
		"amountCents": openapi.Amount,
		"currency":    map[string]any{"type": "string", "pattern": "^[A-Z]{3,8}$"},
		"meta":        map[string]any{"type": "object", "additionalProperties": true, "description": "at most 64 KiB of JSON"},
	}),
	"Entry":          openapi.Obj(entryRequired, entryProp),
	"EntryWithChain": entryWithChain(),
	"Head": openapi.Obj([]string{"id", "hash", "height", "timestamp"}, map[string]any{
		"id": nullStr, "hash": openapi.Str, "height": openapi.Int64, "timestamp": nullStr,
	}),
	"VerifyResult": openapi.Obj([]string{"valid", "verified", "height", "headHash", "verifiedAt", "msToVerify"}, map[string]any{
		"valid": openapi.Bool, "verified": openapi.Bool, "height": openapi.Int64, "headHash": openapi.Str, "verifiedAt": openapi.Str,
		"msToVerify": openapi.Int64, "brokenAt": nullInt, "expectedPrevHash": nullStr, "foundPrevHash": nullStr,
		"reason": openapi.Str, "expectedHash": openapi.Str, "foundHash": openapi.Str,
	}),
	"Stats": openapi.Obj([]string{"totals", "byKind", "asOf", "source"}, map[string]any{
		"totals": windows, "byKind": map[string]any{"type": "object", "additionalProperties": windows},
		"asOf": openapi.DateTime, "source": openapi.Str,
	}),
	"Health": openapi.Obj([]string{"status"}, map[string]any{
		"status": openapi.Str, "database": openapi.Str, "lastEntryAt": nullStr, "height": openapi.Int64,
	}),
}
