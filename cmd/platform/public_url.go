package main

import (
	"net"
	"net/url"
	"strings"
)

// publicURLOf is the default PUBLIC_BASE_URL: the URL of PLATFORM_ADDR, so
// that changing only the listen address keeps pay links, vacancy pages,
// feeds and e-mails pointing at this server. A wildcard host (":8080",
// "0.0.0.0:8080", "[::]:8080") names no host a browser can reach; localhost
// stands in.
func publicURLOf(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// publicURLMismatch explains, for the start-up warning, a PUBLIC_BASE_URL
// whose host and port differ from PLATFORM_ADDR's (often right behind a
// proxy, a mistake when only PLATFORM_ADDR was meant to change); "" when
// they agree.
func publicURLMismatch(cfg Config) string {
	u, err := url.Parse(cfg.PublicBaseURL)
	if err != nil {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	host, listenPort, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return ""
	}
	sameHost := strings.EqualFold(u.Hostname(), host) || host == "" || host == "0.0.0.0" || host == "::" ||
		(isLoopback(host) && isLoopback(u.Hostname()))
	if sameHost && port == listenPort {
		return ""
	}
	return "PUBLIC_BASE_URL " + cfg.PublicBaseURL + " names another host or port than PLATFORM_ADDR " + cfg.Addr +
		": pay links, vacancy pages, feeds and e-mails point there (right behind a proxy; leave PUBLIC_BASE_URL unset to follow PLATFORM_ADDR)"
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
