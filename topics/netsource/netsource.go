// Package netsource makes the platform's outgoing Postgres and Kafka
// connections from one local address, PLATFORM_SOURCE_ADDR, when it is set.
//
// The local cluster (deploy/local/cluster.sh) gives every process its own
// loopback address (127.0.2.N) so that its links can be cut or slowed one by
// one (iptables, tc netem on lo): without it every connection between two
// local processes comes from 127.0.0.1 and no rule can tell them apart.
// Unset (production), the kernel chooses, as before.
//
// It reads the variable itself, unlike the rest of the platform's settings
// (cmd/platform): every Kafka client and Postgres pool of a process is made
// through topics.NewClient or postgres.Connect, deep in the modules, and a
// test-cluster setting is not worth a parameter on each. It lives under
// topics, beside the Kafka clients, and imports nothing of the module, so
// storage may use it without reaching franz-go.
package netsource

import (
	"context"
	"net"
	"os"
	"time"
)

// Env names the variable holding the source address.
const Env = "PLATFORM_SOURCE_ADDR"

// Dialer is a net.Dialer bound to PLATFORM_SOURCE_ADDR (port 0), or nil when
// it is unset or not an IP address.
func Dialer() *net.Dialer {
	ip := net.ParseIP(os.Getenv(Env))
	if ip == nil {
		return nil
	}
	return &net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}, KeepAlive: 5 * time.Minute, Timeout: 30 * time.Second}
}

// DialContext is Dialer's DialContext, or nil when no source is set.
func DialContext() func(ctx context.Context, network, addr string) (net.Conn, error) {
	if d := Dialer(); d != nil {
		return d.DialContext
	}
	return nil
}
