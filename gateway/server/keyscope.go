package server

import (
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/schemas"
)

// RequireKeyScopes makes registering a declared, authenticated route in no
// key area (Router.KeyArea) and without its own Op.KeyScope a declaration
// error found at start-up (a panic naming the route), so a new module of
// the binary cannot leave its routes without a scope by forgetting to say
// what keys may do with them. Without it (unit tests' servers) such a route
// is closed to keys. Call it before any route registers.
func (s *Server) RequireKeyScopes() { s.strictKeyScopes = true }

// NoKeys closes routes to restricted API keys: as an Op.KeyScope it closes
// one route, as a Router.KeyArea every route of the router (credentials,
// the operators' console, platform metadata).
const NoKeys = "none"

// KeyArea returns r with its routes, and those of its groups, in the key
// area name: a Name of schemas.KeyAreas, whose routes a restricted API key
// reaches with the area's read scope on GET and HEAD and its write scope
// otherwise, or NoKeys, whose routes keys cannot call. A route's own
// Op.KeyScope wins over its router's area. An unknown name is a
// declaration error (a panic at start-up).
func (r Router) KeyArea(name string) Router {
	if name != NoKeys && !schemas.IsKeyArea(name) {
		panic(fmt.Sprintf("%s: key area %q is not an area of schemas.KeyAreas (nor server.NoKeys)", r.prefix, name))
	}
	r.area = name
	return r
}

// keyScope is the scope a restricted API key needs on a route of area
// (its router's KeyArea, "" when none was declared), "" when keys cannot
// call it: public routes (they need no credential), admin routes (a
// declared Role), routes of a partner key, routes that declare NoKeys and
// routes of a NoKeys area or of no area. A route's declared KeyScope wins
// over its area's.
func keyScope(method, path, area string, d *Declaration, strict bool) string {
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
	switch area {
	case NoKeys:
		return ""
	case "":
		if d != nil && strict {
			panic(fmt.Sprintf("%s %s: no API key area: declare it on the route's router (Router.KeyArea with an area of "+
				"schemas.KeyAreas, or server.NoKeys to close it to keys) or on the route (Op.KeyScope)", method, path))
		}
		return ""
	}
	return schemas.KeyScopeIn(area, method)
}

// KeyScope returns the scope a restricted API key needs on the route c
// matched ("" when keys cannot call it); auth.Keys asks it, and only for
// requests that carry a key.
func (s *Server) KeyScope(c *fiber.Ctx) string {
	rt := c.Route()
	return s.keyScopes[rt.Method+" "+rt.Path]
}
