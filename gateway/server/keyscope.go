package server

import (
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/schemas"
)

// RequireKeyScopes makes registering a declared, authenticated route under
// no prefix of schemas.KeyAreas a declaration error found at start-up (a
// panic), so a new module of the binary cannot leave its routes without a
// scope by forgetting the table. Without it (unit tests' servers) such a
// route is closed to keys. Call it before any route registers.
func (s *Server) RequireKeyScopes() { s.strictKeyScopes = true }

// NoKeys is the Op.KeyScope of a route closed to restricted API keys.
const NoKeys = "none"

// keyScope is the scope a restricted API key needs on a route, "" when
// keys cannot call it: public routes (they need no credential), admin
// routes (a declared Role), routes of a partner key, routes that declare
// NoKeys, the areas schemas.KeyAreas closes and the prefixes it does not
// list. A route's declared KeyScope wins over its area's.
func keyScope(method, path string, d *Declaration, strict bool) string {
	if d != nil && (d.Public || d.Role != "" || d.APIKey != "") {
		return ""
	}
	if d != nil && d.KeyScope != "" {
		if d.KeyScope == NoKeys {
			return ""
		}
		if !schemas.IsKeyScope(d.KeyScope) {
			panic(fmt.Sprintf("%s %s: KeyScope %q is not a scope of schemas.KeyAreas (nor server.NoKeys)", method, path, d.KeyScope))
		}
		return d.KeyScope
	}
	scope, listed := schemas.KeyScopeOf(method, path)
	if !listed && d != nil && strict {
		panic(fmt.Sprintf("%s %s: no API key scope: add its prefix to schemas.KeyAreas (a nameless area closes it to keys)",
			method, path))
	}
	return scope
}

// KeyScope returns the scope a restricted API key needs on the route c
// matched ("" when keys cannot call it); auth.Keys asks it, and only for
// requests that carry a key.
func (s *Server) KeyScope(c *fiber.Ctx) string {
	rt := c.Route()
	return s.keyScopes[rt.Method+" "+rt.Path]
}
