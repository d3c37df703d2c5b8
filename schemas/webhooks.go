package schemas

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/netip"
	"strings"
	"time"
)

// BlockedAddr reports whether a delivery may not go to ip: private,
// loopback, link-local, unspecified, multicast, carrier-grade NAT and
// reserved addresses are refused unless WEBHOOK_ALLOW_PRIVATE=1, also when
// they hide inside an IPv6 address that reaches them (IPv4-mapped, NAT64,
// 6to4); Teredo tunnels are refused outright.
func BlockedAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	if ip.Is6() {
		b := ip.As16()
		switch {
		case nat64.Contains(ip) || nat64Local.Contains(ip):
			return BlockedAddr(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
		case sixToFour.Contains(ip):
			return BlockedAddr(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
		case teredo.Contains(ip):
			return true
		}
	}
	for _, p := range reserved6 {
		if p.Contains(ip) {
			return true
		}
	}
	if ip.IsPrivate() || ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return true
	}
	for _, p := range reserved {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour  = netip.MustParsePrefix("2002::/16")
	teredo     = netip.MustParsePrefix("2001::/32")
	// reserved are IPv4 ranges that are neither public nor covered by the
	// net/netip predicates: "this network", carrier-grade NAT, IETF
	// protocol assignments, benchmarking and the reserved class E space.
	reserved = []netip.Prefix{
		netip.MustParsePrefix("0.0.0.0/8"), netip.MustParsePrefix("100.64.0.0/10"),
		netip.MustParsePrefix("192.0.0.0/24"), netip.MustParsePrefix("198.18.0.0/15"),
		netip.MustParsePrefix("240.0.0.0/4"),
	}
	// reserved6 are IPv6 ranges that are never a public destination: the
	// deprecated IPv4-compatible ::a.b.c.d (::/96, which the kernel may
	// route to the IPv4 inside: [::127.0.0.1] is loopback), the
	// IPv4-translated ::ffff:0:a.b.c.d (SIIT), discard-only 100::/64,
	// documentation 2001:db8::/32 and the old site-local fec0::/10.
	reserved6 = []netip.Prefix{
		netip.MustParsePrefix("::/96"), netip.MustParsePrefix("::ffff:0:0:0/96"),
		netip.MustParsePrefix("100::/64"), netip.MustParsePrefix("2001:db8::/32"),
		netip.MustParsePrefix("fec0::/10"),
	}
)

// WebhookSubscription is a webhook endpoint as the API answers it: never
// its secret. Events null means every event about the owner.
type WebhookSubscription struct {
	ID        string    `json:"id" required:"true" format:"ksuid"`
	URL       string    `json:"url" required:"true"`
	Events    []string  `json:"events" required:"true" description:"the event types it receives; null for all"`
	CreatedAt time.Time `json:"createdAt" required:"true"`
}

// WebhookDelivery is one row of the delivery log: an event queued for one
// subscription and how its attempts went. NextAttemptAt is set only while
// another attempt is due (pending or failed).
type WebhookDelivery struct {
	ID             string     `json:"id" required:"true" format:"ksuid"`
	WebhookID      string     `json:"webhookId" required:"true" format:"ksuid"`
	EventID        string     `json:"eventId" required:"true"`
	Type           string     `json:"type" required:"true"`
	Status         string     `json:"status" required:"true" enum:"pending,failed,delivered,dead_letter"`
	Attempts       int        `json:"attempts" required:"true" minimum:"0"`
	LastStatusCode *int       `json:"lastStatusCode" required:"true" description:"the HTTP status of the last attempt"`
	LastError      *string    `json:"lastError" required:"true"`
	NextAttemptAt  *time.Time `json:"nextAttemptAt" required:"true"`
	LastDurationMs *int       `json:"lastDurationMs" required:"true" description:"how long the last attempt took, in milliseconds"`
	CreatedAt      time.Time  `json:"createdAt" required:"true"`
}

// SecretPrefix starts a Standard Webhooks secret: "whsec_" + base64 of the
// key bytes.
const SecretPrefix = "whsec_"

// secretBytes is the size of a minted key: 32 random bytes, above the
// 24 the Standard Webhooks specification asks for.
const secretBytes = 32

// NewWebhookSecret mints a signing secret in the Standard Webhooks format.
func NewWebhookSecret() (string, error) {
	key := make([]byte, secretBytes)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("mint webhook secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(key), nil
}

// WebhookKey is the HMAC key of a signing secret: for a Standard Webhooks
// secret ("whsec_" + base64 of at least 24 bytes, as NewWebhookSecret mints)
// the decoded bytes, which is what off-the-shelf verifiers use; for any
// other secret its own bytes (verifiers then take "whsec_" + base64(secret)).
func WebhookKey(secret string) []byte {
	if rest, ok := strings.CutPrefix(secret, SecretPrefix); ok {
		if key, err := base64.StdEncoding.DecodeString(rest); err == nil && len(key) >= 24 {
			return key
		}
	}
	return []byte(secret)
}

// WebhookSubscriptionDetail is an endpoint as its owner manages it: the
// subscription with whether it is the primary one (/me/webhook), whether it
// is enabled and when it last changed. Secret is set only in the answer that
// minted it.
type WebhookSubscriptionDetail struct {
	WebhookSubscription
	Primary   bool      `json:"primary" required:"true" description:"the endpoint of /me/webhook"`
	Enabled   bool      `json:"enabled" required:"true" description:"false while paused: no deliveries are made"`
	UpdatedAt time.Time `json:"updatedAt" required:"true"`
}

// WebhookSubscriptionMinted is the answer that minted a secret: the only
// time the server shows it.
type WebhookSubscriptionMinted struct {
	WebhookSubscription
	Secret string `json:"secret,omitempty" description:"the whsec_ secret the server minted because none was sent; shown only in this answer"`
	// PreviousSecretExpiresAt answers a rotation that keeps the replaced
	// secret signing beside the new one: until then.
	PreviousSecretExpiresAt *time.Time `json:"previousSecretExpiresAt,omitempty" description:"after a rotation with an overlap: until then deliveries carry a signature with the previous secret too"`
}

// WebhookEndpointPatched answers a PATCH of an endpoint: Secret is set only
// when the server minted it (secret: null), shown only in this answer.
type WebhookEndpointPatched struct {
	WebhookSubscriptionDetail
	Secret string `json:"secret,omitempty" description:"the whsec_ secret the server minted; shown only in this answer"`
	// PreviousSecretExpiresAt: see WebhookSubscriptionMinted.
	PreviousSecretExpiresAt *time.Time `json:"previousSecretExpiresAt,omitempty" description:"after a rotation with an overlap: until then deliveries carry a signature with the previous secret too"`
}

// Webhook secret rotation overlap (issue 35; spec, Secret rotation): the
// replaced secret keeps signing beside the new one for expiresIn seconds.
const (
	WebhookOverlapDefault = 24 * 60 * 60
	WebhookOverlapMax     = 48 * 60 * 60
)

// TypeWebhookTest is the event an owner sends to one endpoint with
// POST /api/fiat/webhook-subs/:id/test.
const TypeWebhookTest = "webhook.test"

// WebhookTest is the data of webhook.test.
type WebhookTest struct {
	WebhookID string `json:"webhookId" required:"true" description:"the endpoint the test was sent to"`
	UserID    string `json:"userId" required:"true" description:"its owner, who asked for the test"`
	Message   string `json:"message" required:"true"`
}

// TypeWebhookDeliveryUpdated records a change of a webhook delivery row (queued,
// attempted, queued again) on topics.AnalyticsWebhooks, for the analytics
// copy's delivery health.
const TypeWebhookDeliveryUpdated = "webhook.delivery.updated"

// webhookVersions lists the webhook module's message types and their schema versions.
var webhookVersions = map[string]int{TypeWebhookDeliveryUpdated: 1}

// WebhookDeliveryUpdated is the data of webhook.delivery.updated: the
// delivery row as the change left it. LastStatusCode is 0 when no HTTP
// answer came (yet).
type WebhookDeliveryUpdated struct {
	DeliveryID     string    `json:"deliveryId"`
	WebhookID      string    `json:"webhookId"`
	EventID        string    `json:"eventId"`
	EventType      string    `json:"eventType"`
	Status         string    `json:"status"`
	Attempts       int       `json:"attempts"`
	LastStatusCode int       `json:"lastStatusCode"`
	UpdatedAt      time.Time `json:"updatedAt"`
}

// StreamTicket is a single-use credential of the admin event stream
// (GET /api/fiat/admin/events?ticket=), for EventSource, which cannot send
// an Authorization header: it works once, within a minute, for the admin
// who minted it. The bearer token never goes in a URL.
type StreamTicket struct {
	Ticket    string `json:"ticket" required:"true"`
	ExpiresAt string `json:"expiresAt" required:"true" format:"date-time"`
}

// How a failed delivery attempt is recorded (consumers/webhooks) and how
// the endpoint's owner is told about it (gateway/webhooks): the owner sees
// a reason class, never the dial error or the attempt's timing, which
// would make the delivery log a port and liveness probe of any public host
// (connection refused in 2 ms, filtered in 10 s). Fiat admins see the
// recorded error.
const (
	WebhookErrBlocked       = "destination address is private, loopback or link-local"
	WebhookErrTimeoutPrefix = "no answer within "
	WebhookErrStatusPrefix  = "endpoint answered "
	WebhookErrSecretPrefix  = "the subscription's signing secret cannot be opened"

	WebhookReasonBlocked = "destination address not allowed"
	WebhookReasonFailed  = "no successful answer from the endpoint (connection, TLS or timeout)"
	WebhookReasonSecret  = "the endpoint's signing secret cannot be used; set a new one"
)

// WebhookOwnerReason is the reason class of a recorded attempt error shown
// to the endpoint's owner: an HTTP status answer is shown as it is (the
// owner's endpoint answered it); anything else is a class.
func WebhookOwnerReason(recorded string) string {
	switch {
	case recorded == "":
		return ""
	case strings.HasPrefix(recorded, WebhookErrStatusPrefix):
		return recorded
	case recorded == WebhookErrBlocked:
		return WebhookReasonBlocked
	case strings.HasPrefix(recorded, WebhookErrSecretPrefix):
		return WebhookReasonSecret
	default:
		return WebhookReasonFailed
	}
}
