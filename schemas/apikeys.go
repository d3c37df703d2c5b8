package schemas

import (
	"sort"
	"strings"
)

// APIKeyPrefix starts every restricted API key (like Stripe's rk_live_): a
// bearer token with this prefix is a key, never a JWT (a JWT starts "eyJ").
const APIKeyPrefix = "rk_live_"

// MaxAPIKeys is how many active restricted API keys a user may hold.
const MaxAPIKeys = 10

// KeyArea is one area of what restricted API keys reach: a route in the
// area needs the scope Name+":read" when read (GET, HEAD) and Name+":write"
// otherwise. Which routes are in an area is declared where they register
// (gateway/server: Router.KeyArea on a module's router group, or a route's
// own Op.KeyScope), not here.
type KeyArea struct {
	Name        string
	Description string
}

// KeyAreas is the one list of API key areas: the scopes a key may carry
// (KeyScopes) and what POST /api/auth/api-keys accepts. A route in no area
// is closed to keys, and so is every public route (it needs no key) and
// every admin route (a declared Role), whatever area it is in.
var KeyAreas = []KeyArea{
	{Name: "account", Description: "the caller's profile (GET /api/auth/me)"},
	{Name: "fiat", Description: "wallets, deposits, transfers, withdrawals, payouts, KYC, payment requests, refunds, merchant authorizations"},
	{Name: "webhooks", Description: "the caller's webhook endpoints, their deliveries and event stream"},
	{Name: "ledger", Description: "ledger entries"},
	{Name: "reputation", Description: "the caller's reputation"},
	{Name: "mask", Description: "virtual masks and their charges"},
	{Name: "gov", Description: "proposals and votes"},
	{Name: "charity", Description: "campaigns and donations"},
	{Name: "trade", Description: "trading accounts, top-ups and transfers"},
	{Name: "sign", Description: "signatures and their verification"},
	{Name: "constitution", Description: "the constitution and planet modules"},
	{Name: "build", Description: "projects, vacancies and partner keys"},
	{Name: "partner", Description: "partner records (rights, chess, certificates, ecosystem)"},
}

// Key scope access levels.
const (
	ScopeRead  = "read"
	ScopeWrite = "write"
)

// KeyScopes lists every scope a key may carry, sorted: each area's
// read and write.
func KeyScopes() []string {
	var out []string
	for _, a := range KeyAreas {
		out = append(out, a.Name+":"+ScopeRead, a.Name+":"+ScopeWrite)
	}
	sort.Strings(out)
	return out
}

// IsKeyScope reports whether s is a scope of the list.
func IsKeyScope(s string) bool {
	name, level, ok := strings.Cut(s, ":")
	return ok && (level == ScopeRead || level == ScopeWrite) && IsKeyArea(name)
}

// IsKeyArea reports whether name is the Name of an area of KeyAreas.
func IsKeyArea(name string) bool {
	for _, a := range KeyAreas {
		if name != "" && a.Name == name {
			return true
		}
	}
	return false
}

// KeyScopeIn is the scope a key needs for method on a route of area: its
// read for GET and HEAD, its write otherwise.
func KeyScopeIn(area, method string) string {
	if method == "GET" || method == "HEAD" {
		return area + ":" + ScopeRead
	}
	return area + ":" + ScopeWrite
}

// APIKeyCreated answers POST /api/auth/api-keys: the key, shown this once.
type APIKeyCreated struct {
	APIKey
	Key string `json:"key" required:"true" description:"the key, shown only in this answer (rk_live_…); send it as Authorization: Bearer <key>"`
}

// APIKey is one of the caller's restricted API keys, without the key.
type APIKey struct {
	ID         string   `json:"id" required:"true" format:"ksuid"`
	Name       string   `json:"name" required:"true"`
	Prefix     string   `json:"prefix" required:"true" description:"the key's first characters, to tell keys apart"`
	Scopes     []string `json:"scopes" required:"true" nullable:"false"`
	CreatedAt  string   `json:"createdAt" required:"true" format:"date-time"`
	LastUsedAt *string  `json:"lastUsedAt" required:"true" format:"date-time" description:"the last use, to the minute; null before the first"`
	ExpiresAt  *string  `json:"expiresAt" required:"true" format:"date-time" description:"null: the key does not expire"`
}

// APIKeyList answers GET /api/auth/api-keys.
type APIKeyList struct {
	Items []APIKey `json:"items" required:"true" nullable:"false"`
}
