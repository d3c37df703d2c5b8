// Package clientip decides which address a request comes from: the one
// place the gateway reads it, for the per-IP rate limits, the abuse
// budgets, the access log and what commands record.
//
// X-Forwarded-For is written by whoever sends the request, so it is read
// only when the TCP peer is a proxy the operator trusts (TRUSTED_PROXIES),
// and then from the right: each trusted proxy appends the address it got
// the request from, so the first address from the right that is not a
// trusted proxy is the client, and everything left of it is what the
// client claimed. Without trusted proxies the peer address is the client.
package clientip

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// HeaderForwardedFor is the header trusted proxies append to.
const HeaderForwardedFor = "X-Forwarded-For"

// Resolver finds a request's client address.
type Resolver struct {
	trusted []netip.Prefix
}

// New builds a resolver that trusts X-Forwarded-For from peers in trusted
// (none: the peer is always the client).
func New(trusted []netip.Prefix) *Resolver {
	return &Resolver{trusted: trusted}
}

// ParseTrusted reads a comma-separated list of CIDRs or single addresses
// ("10.0.0.0/8, 127.0.0.1, ::1"). Every entry that does not read is named.
func ParseTrusted(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	var bad []string
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		if a, err := netip.ParseAddr(s); err == nil {
			a = a.Unmap()
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		bad = append(bad, s)
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("not a CIDR or an IP address: %s", strings.Join(bad, ", "))
	}
	return out, nil
}

func (r *Resolver) isTrusted(a netip.Addr) bool {
	for _, p := range r.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Resolve returns the client address of a request from peer whose
// X-Forwarded-For values (each a comma-separated list, in header order)
// are forwarded. An entry that does not read stops the walk at the hop
// after it (the nearest address still known to be true).
func (r *Resolver) Resolve(peer netip.Addr, forwarded []string) netip.Addr {
	addr := peer.Unmap()
	if len(r.trusted) == 0 || !r.isTrusted(addr) {
		return addr
	}
	var hops []string
	for _, v := range forwarded {
		hops = append(hops, strings.Split(v, ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		hop, ok := parseHop(hops[i])
		if !ok {
			return addr
		}
		addr = hop
		if !r.isTrusted(addr) {
			return addr
		}
	}
	return addr
}

// parseHop reads one X-Forwarded-For entry: an address, possibly with a
// port ("203.0.113.7:5123", "[2001:db8::1]:443").
func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}

type localsKey struct{}

// Handler stores each request's client address for Addr, String and Key;
// it runs before every other middleware.
func (r *Resolver) Handler() fiber.Handler {
	return func(c *fiber.Ctx) error {
		var forwarded []string
		if len(r.trusted) > 0 {
			for _, v := range c.Request().Header.PeekAll(HeaderForwardedFor) {
				forwarded = append(forwarded, string(v))
			}
		}
		c.Locals(localsKey{}, r.Resolve(peerOf(c), forwarded))
		return c.Next()
	}
}

func peerOf(c *fiber.Ctx) netip.Addr {
	a, ok := netip.AddrFromSlice(c.Context().RemoteIP())
	if !ok {
		return netip.IPv4Unspecified()
	}
	return a.Unmap()
}

// Addr returns the request's client address (the peer's when no Resolver
// ran, as in a handler test).
func Addr(c *fiber.Ctx) netip.Addr {
	if a, ok := c.Locals(localsKey{}).(netip.Addr); ok {
		return a
	}
	return peerOf(c)
}

// String is Addr as text, for logs and the commands that record it.
func String(c *fiber.Ctx) string { return Addr(c).String() }

// Key is what per-IP limits and budgets charge: the IPv4 address, or the
// /64 of an IPv6 one. A /64 is one subscriber's network (RFC 6177), which
// can take a fresh address from it at will, so a budget per address would
// be a budget per request.
func Key(c *fiber.Ctx) string { return KeyOf(Addr(c)) }

// KeyOf is Key for an address.
func KeyOf(a netip.Addr) string {
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}
