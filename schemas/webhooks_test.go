package schemas

import (
	"bytes"
	"encoding/base64"
	"net/netip"
	"strings"
	"testing"
)

func TestBlockedAddr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr    string
		blocked bool
	}{
		{"10.1.2.3", true}, {"172.16.0.1", true}, {"192.168.1.1", true}, {"127.0.0.1", true},
		{"169.254.169.254", true}, {"0.0.0.0", true}, {"100.64.0.1", true}, {"224.0.0.1", true},
		{"::1", true}, {"fe80::1", true}, {"fc00::1", true}, {"::ffff:127.0.0.1", true}, {"::", true},
		{"8.8.8.8", false}, {"1.1.1.1", false}, {"2606:4700:4700::1111", false}, {"100.128.0.1", false},
		// IPv6 addresses that reach an IPv4 one: judged by the IPv4 inside.
		{"::ffff:169.254.169.254", true}, {"64:ff9b::7f00:1", true}, {"64:ff9b::a9fe:a9fe", true},
		{"64:ff9b:1::a00:1", true}, {"2002:7f00:1::", true}, {"2002:c0a8:101::1", true},
		{"64:ff9b::808:808", false}, {"2002:808:808::1", false},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", true}, // Teredo
		{"198.18.0.1", true}, {"240.0.0.1", true}, {"192.0.0.8", true},
		// IPv4-compatible (::a.b.c.d) and IPv4-translated (::ffff:0:a.b.c.d)
		// forms, and IPv6 ranges that are not public either.
		{"::127.0.0.1", true}, {"::7f00:1", true}, {"::8.8.8.8", true}, {"::ffff:0:7f00:1", true},
		{"::ffff:0:808:808", true}, {"100::1", true}, {"2001:db8::1", true}, {"fec0::1", true},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			t.Parallel()
			if got := BlockedAddr(netip.MustParseAddr(tt.addr)); got != tt.blocked {
				t.Fatalf("BlockedAddr(%s) = %v", tt.addr, got)
			}
		})
	}
}

// TestWebhookSecretFormat: a minted secret is whsec_ + base64 of 32 random
// bytes, keyed with those bytes; any other secret is keyed with its own.
func TestWebhookSecretFormat(t *testing.T) {
	s, err := NewWebhookSecret()
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := NewWebhookSecret()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, SecretPrefix))
	if !strings.HasPrefix(s, SecretPrefix) || err != nil || len(key) != 32 || s == s2 {
		t.Fatalf("minted %q (%d bytes, %v)", s, len(key), err)
	}
	if !bytes.Equal(WebhookKey(s), key) {
		t.Fatal("a minted secret is not keyed with its decoded bytes")
	}
	for _, own := range []string{"0123456789abcdef", "whsec-test-0123456789abcdef", "whsec_c2hvcnQ=", "whsec_not base64!"} {
		if !bytes.Equal(WebhookKey(own), []byte(own)) {
			t.Errorf("%q is not keyed with its own bytes", own)
		}
	}
}
