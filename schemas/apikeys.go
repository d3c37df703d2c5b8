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

// KeyArea is one row of the table of what restricted API keys reach: a
// route under one of Prefixes (the longest prefix over every area wins)
// needs the scope Name+":read" when read (GET, HEAD) and Name+":write"
// otherwise. An area without a Name is closed to keys: its routes answer a
// key 403 forbidden whatever its scopes.
type KeyArea struct {
	Name        string
	Description string
	Prefixes    []string
}

// KeyAreas is the one table of API key scopes. A route under no prefix
// here is closed to keys, and so is every public route (it needs no key)
// and every admin route (a declared Role), whatever prefix it has.
var KeyAreas = []KeyArea{
	// account has no prefix: GET /api/auth/me declares it (server.Op.KeyScope).
	{Name: "account", Description: "the caller's profile (GET /api/auth/me)"},
	{Name: "fiat", Description: "wallets, deposits, transfers, withdrawals, payouts, KYC, payment requests, refunds, merchant authorizations", Prefixes: []string{"/api/fiat"}},
	{Name: "webhooks", Description: "the caller's webhook endpoints, their deliveries and event stream",
		Prefixes: []string{"/api/fiat/me/webhook", "/api/fiat/me/webhooks", "/api/fiat/webhook-subs", "/api/fiat/me/events"}},
	{Name: "ledger", Description: "ledger entries", Prefixes: []string{"/api/ledger"}},
	{Name: "reputation", Description: "the caller's reputation", Prefixes: []string{"/api/reputation"}},
	{Name: "mask", Description: "virtual masks and their charges", Prefixes: []string{"/api/mask"}},
	{Name: "gov", Description: "proposals and votes", Prefixes: []string{"/api/gov"}},
	{Name: "charity", Description: "campaigns and donations", Prefixes: []string{"/api/charity"}},
	{Name: "trade", Description: "trading accounts, top-ups and transfers", Prefixes: []string{"/api/trade"}},
	{Name: "sign", Description: "signatures and their verification", Prefixes: []string{"/api/sign"}},
	{Name: "constitution", Description: "the constitution and planet modules", Prefixes: []string{"/api/constitution", "/api/planet",
		"/api-backend/api/constitution", "/api-backend/api/planet"}},
	{Name: "build", Description: "projects, vacancies and partner keys", Prefixes: []string{"/api/build"}},
	{Name: "partner", Description: "partner records (rights, chess, certificates, ecosystem)",
		Prefixes: []string{"/api/rights", "/api/chess", "/api/cert", "/api/ecosystem"}},
	// Closed to keys: credentials (password, MFA, sessions, the keys
	// themselves) and the operators' console. A route inside an open area
	// closes itself with server.NoKeys (merchant key management).
	{Description: "identity: login, password, MFA, sessions and key management need a login token", Prefixes: []string{"/api/auth"}},
	{Description: "the operators' console", Prefixes: []string{"/api/platform/admin"}},
	{Description: "platform metadata", Prefixes: []string{"/api/platform"}},
}

// Key scope access levels.
const (
	ScopeRead  = "read"
	ScopeWrite = "write"
)

// KeyScopes lists every scope a key may carry, sorted: each named area's
// read and write.
func KeyScopes() []string {
	var out []string
	for _, a := range KeyAreas {
		if a.Name != "" {
			out = append(out, a.Name+":"+ScopeRead, a.Name+":"+ScopeWrite)
		}
	}
	sort.Strings(out)
	return out
}

// IsKeyScope reports whether s is a scope of the table.
func IsKeyScope(s string) bool {
	name, level, ok := strings.Cut(s, ":")
	if !ok || name == "" || (level != ScopeRead && level != ScopeWrite) {
		return false
	}
	for _, a := range KeyAreas {
		if a.Name == name {
			return true
		}
	}
	return false
}

// KeyScopeOf is the scope a key needs for method on the route path (as
// declared, e.g. /api/fiat/transfers/:id), and whether the table lists the
// path at all; "" with listed true is an area closed to keys. Public and
// admin routes are the caller's to close (server.KeyScope).
func KeyScopeOf(method, path string) (scope string, listed bool) {
	best := -1
	var area KeyArea
	for _, a := range KeyAreas {
		for _, p := range a.Prefixes {
			if (path == p || strings.HasPrefix(path, p+"/")) && len(p) > best {
				best, area = len(p), a
			}
		}
	}
	if best < 0 {
		return "", false
	}
	if area.Name == "" {
		return "", true
	}
	if method == "GET" || method == "HEAD" {
		return area.Name + ":" + ScopeRead, true
	}
	return area.Name + ":" + ScopeWrite, true
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
