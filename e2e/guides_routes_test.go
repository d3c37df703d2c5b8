package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// routeMention is a path of the API as the guides write it:
// /api/..., with :param or {param} segments.
var routeMention = regexp.MustCompile("/api/[A-Za-z0-9_.{}:/-]+")

// normalRoute writes a path with every parameter as {} and no trailing
// slash or punctuation, so /webhook-subs/:id and /webhook-subs/{id} match.
func normalRoute(p string) string {
	p = strings.TrimRight(p, "/.:")
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, ":") || strings.HasPrefix(s, "{") {
			segs[i] = "{}"
		}
	}
	return strings.Join(segs, "/")
}

// TestGuidesNameRealRoutes: every /api/... path a guide names is a route
// the platform serves (or a prefix of routes, such as a group), and every
// webhook and auth route is named by some guide — the routes are the
// complete document's, the guides every file in gateway/platform/guides,
// so a route added with its guide passes and one added without fails.
func TestGuidesNameRealRoutes(t *testing.T) {
	p := shared(t)
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	p.Get(t, "/api/platform/openapi.full.json", "").Decode(t, &doc)
	routes := map[string]bool{}
	for path := range doc.Paths {
		routes[normalRoute(path)] = true
	}
	if len(routes) < 50 {
		t.Fatalf("the complete document lists %d paths", len(routes))
	}
	files, err := filepath.Glob(filepath.Join(guidesDir, "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no guides in %s: %v", guidesDir, err)
	}
	mentioned := map[string]bool{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range routeMention.FindAllString(string(raw), -1) {
			r := normalRoute(strings.SplitN(m, "?", 2)[0])
			mentioned[r] = true
			if routes[r] {
				continue
			}
			prefix := false
			for have := range routes {
				if strings.HasPrefix(have, r+"/") {
					prefix = true
					break
				}
			}
			if !prefix {
				t.Errorf("%s names %s, which the platform does not serve", filepath.Base(f), m)
			}
		}
	}
	var missing []string
	for r := range routes {
		if userFacing(r) && !mentioned[r] {
			missing = append(missing, r)
		}
	}
	sort.Strings(missing)
	for _, r := range missing {
		t.Errorf("no guide names %s (an auth or webhook route)", r)
	}
}

// userFacing reports whether a guide must name r: the auth routes and the
// outbound webhooks' (endpoints, deliveries, the caller's event stream),
// not each module's health and document, nor the inbound partner and
// processor webhooks (the README's partner section covers those).
func userFacing(r string) bool {
	if strings.HasSuffix(r, "/health") || strings.HasSuffix(r, "/openapi.json") {
		return false
	}
	if strings.HasPrefix(r, "/api/auth/") {
		return true
	}
	for _, part := range []string{"/webhook-subs", "/me/webhook", "/webhook-deliveries", "/me/events/stream"} {
		if strings.Contains(r, part) {
			return true
		}
	}
	return false
}
