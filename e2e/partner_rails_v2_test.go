package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// partnerChessOwn is the chess partner's own HMAC key in these tests.
const partnerChessOwn = "e2e-chess-own-hmac-secret-0123456789"

// v2Headers signs the documented v2 base string, timestamp.METHOD.path.body,
// with the standard library.
func v2Headers(secret, method, path string, body []byte, at time.Time) map[string]string {
	ts := strconv.FormatInt(at.Unix(), 10)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "." + method + "." + path + "."))
	m.Write(body)
	return map[string]string{"X-Platform-Timestamp": ts, "X-Platform-Signature": "v2=" + hex.EncodeToString(m.Sum(nil)),
		"Content-Type": "application/json"}
}

// TestPartnerRailsOwnSecretAndVersion: with CHESS_WEBHOOK_SECRET the chess
// rail refuses the shared secret and signatures that do not name its
// method and path; the rights rail without its own secret still takes the
// spec's shared-secret signature; an older tournament version never
// overwrites a newer one.
func TestPartnerRailsOwnSecretAndVersion(t *testing.T) {
	p := startPartnerPlatform(t, map[string]string{"CHESS_WEBHOOK_SECRET": partnerChessOwn, "WEBHOOK_REQUIRE_HMAC": "1"})
	starts := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
	id := uniqueID("t-v2")
	tournament := func(version, entries int) []byte {
		raw, _ := json.Marshal(map[string]any{"id": id, "startsAt": starts, "format": "swiss", "prizePool": 1000,
			"capacity": 10, "entries": entries, "version": version})
		return raw
	}
	body := tournament(2, 5)
	// The shared secret (spec scheme, and v2) no longer opens the chess rail.
	h := hmacHeaders(body, time.Now(), "sha256=")
	h["Content-Type"] = "application/json"
	wantStatus(t, "shared secret on chess", deliver(t, p, tournamentHook, body, h), http.StatusUnauthorized)
	wantStatus(t, "shared secret v2 on chess", deliver(t, p, tournamentHook, body,
		v2Headers(partnerHMAC, "POST", tournamentHook, body, time.Now())), http.StatusUnauthorized)
	// A signature made for the other chess route is refused here.
	wantStatus(t, "signed for another path", deliver(t, p, tournamentHook, body,
		v2Headers(partnerChessOwn, "POST", chessHook, body, time.Now())), http.StatusUnauthorized)
	// The chess partner's own v2 signature is accepted.
	wantStatus(t, "own v2", deliver(t, p, tournamentHook, body, v2Headers(partnerChessOwn, "POST", tournamentHook, body, time.Now())), http.StatusCreated)

	// An older version arriving late changes nothing.
	old := tournament(1, 3)
	r := wantStatus(t, "older version", deliver(t, p, tournamentHook, old, v2Headers(partnerChessOwn, "POST", tournamentHook, old, time.Now())), http.StatusOK)
	if r["stale"] != true || r["entries"] != float64(5) {
		t.Fatalf("older version answered %v", r)
	}
	newer := tournament(3, 7)
	r = wantStatus(t, "newer version", deliver(t, p, tournamentHook, newer, v2Headers(partnerChessOwn, "POST", tournamentHook, newer, time.Now())), http.StatusOK)
	if r["entries"] != float64(7) || r["stale"] != nil {
		t.Fatalf("newer version answered %v", r)
	}
	up := p.Get(t, "/api/chess/upcoming?limit=200", "")
	var list struct {
		Items []struct {
			ID      string `json:"id"`
			Entries int    `json:"entries"`
		} `json:"items"`
	}
	up.Decode(t, &list)
	found := false
	for _, it := range list.Items {
		if it.ID == id {
			found = true
			if it.Entries != 7 {
				t.Fatalf("upcoming shows %d entries, want 7", it.Entries)
			}
		}
	}
	if !found {
		t.Fatalf("tournament %s not upcoming: %s", id, up.Body)
	}

	// Rights has no secret of its own, but chess has: the partners are
	// distinct parties, so the shared secret (which chess holds too) no
	// longer opens the rights rail, in either scheme.
	royalty, _ := json.Marshal(map[string]any{"eventId": uniqueID("r-v2"), "email": uniqueEmail("v2"), "productKey": "p",
		"period": "2025-06", "amount": 10})
	h = hmacHeaders(royalty, time.Now(), "")
	h["Content-Type"] = "application/json"
	wantStatus(t, "rights with the shared secret", deliver(t, p, rightsHook, royalty, h), http.StatusUnauthorized)
}
