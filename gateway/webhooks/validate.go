package webhooks

import (
	"context"
	"net/netip"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
)

// localHint ends the refusals of a local URL: how to receive deliveries on
// a laptop without a public URL.
const localHint = "; to test on your machine, run `platform webhooks listen --forward-to <url>`, " +
	"or start the server with WEBHOOK_ALLOW_PRIVATE=1"

// Secret and URL limits.
const (
	MinSecret = 16
	MaxSecret = 256
	MaxURL    = 2048
)

// checkURL validates an endpoint URL: absolute, https, no credentials, and
// a host that resolves only to public addresses. allowPrivate lifts the
// https and address rules (and skips resolution).
func checkURL(ctx context.Context, v *bind.Validator, res Resolver, raw string, allowPrivate bool) string {
	raw = strings.TrimSpace(raw)
	if !v.Required("url", raw) {
		return raw
	}
	if len(raw) > MaxURL {
		v.Fail("url", "must be at most 2048 characters")
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Hostname() == "" || u.Opaque != "" {
		v.Fail("url", "must be an absolute https URL")
		return raw
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme == "https":
	case scheme == "http" && allowPrivate:
	case scheme == "http":
		v.Fail("url", "must use https"+localHint)
		return raw
	default:
		v.Fail("url", "must use https")
		return raw
	}
	if u.User != nil {
		v.Fail("url", "must not carry credentials")
		return raw
	}
	if allowPrivate {
		return raw
	}
	host := u.Hostname()
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		addrs, err = res.LookupNetIP(rctx, "ip", host)
		if err != nil || len(addrs) == 0 {
			v.Fail("url", "host does not resolve")
			return raw
		}
	}
	for _, a := range addrs {
		if schemas.BlockedAddr(a) {
			v.Fail("url", "must not resolve to a private, loopback or link-local address"+localHint)
			break
		}
	}
	return raw
}

// checkSecret validates a signing secret: 16 to 256 characters.
func checkSecret(v *bind.Validator, secret string) {
	if !v.Required("secret", secret) {
		return
	}
	if n := utf8.RuneCountInString(secret); n < MinSecret || n > MaxSecret {
		v.Fail("secret", "must be 16 to 256 characters (a random 32-byte hex value is suggested)")
	}
}

// checkEvents validates an events list: nil means all events; otherwise a
// non-empty list of the event catalog's types (GET /api/platform/events),
// returned without duplicates.
func checkEvents(v *bind.Validator, events []string) []string {
	if events == nil {
		return nil
	}
	if len(events) == 0 {
		v.Fail("events", "must list at least one event type, or be omitted for all events")
		return nil
	}
	out := []string{}
	seen := map[string]bool{}
	for _, e := range events {
		if !schemas.IsEventType(e) {
			v.Fail("events", "unknown event type "+quote(e)+"; GET /api/platform/events lists them all")
			return nil
		}
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out
}

func quote(s string) string {
	if utf8.RuneCountInString(s) > 64 {
		s = string([]rune(s)[:64]) + "…"
	}
	return `"` + s + `"`
}
