package e2e

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

// userStream reads GET /api/fiat/me/events/stream of a user and keeps every
// event's data until the test ends.
type userStream struct {
	mu   sync.Mutex
	data []string
}

func openUserStream(t *testing.T, p *harness.Platform, token string) *userStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.BaseURL+"/api/fiat/me/events/stream", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("open the user stream: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("user stream: %d", resp.StatusCode)
	}
	s := &userStream{}
	go func() {
		defer resp.Body.Close()
		r := bufio.NewReader(resp.Body)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if d, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "data: "); ok {
				s.mu.Lock()
				s.data = append(s.data, d)
				s.mu.Unlock()
			}
		}
	}()
	return s
}

// has reports whether an event whose data names the partner event id came.
func (s *userStream) has(eventID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.data {
		if strings.Contains(d, eventID) {
			return true
		}
	}
	return false
}

// TestPartnerEarningsReachOnlyVerifiedOwners: a royalty recorded for an
// address that its registered account has not verified does not reach that
// account's event stream; once verified, the list shows it, and a royalty
// recorded after reaches the stream. The two royalties share the address
// (the events' key), so they are read in order: the second one arriving
// proves the first was passed over, not still on its way. (Webhooks match
// by the same subjects, consumers/webhooks.Subjects: the event names no
// user, storage/partner's TestRoyaltiesRecordOnceEvenConcurrently.)
func TestPartnerEarningsReachOnlyVerifiedOwners(t *testing.T) {
	p := startPartnerPlatform(t, nil)
	email := uniqueEmail("squat")
	u := p.RegisterEmail(t, email)
	stream := openUserStream(t, p, u.Token)

	before, after := uniqueID("before"), uniqueID("after")
	royalty := func(eventID string, amount int) {
		t.Helper()
		wantStatus(t, "royalty "+eventID, signedDelivery(t, p, rightsHook, map[string]any{"eventId": eventID, "email": email,
			"productKey": "song", "period": "2030-01", "amount": amount}), http.StatusCreated)
	}
	royalty(before, 700)
	wantStatus(t, "unverified royalties", p.Get(t, "/api/rights/royalties", u.Token), http.StatusForbidden)

	p.VerifyEmail(t, u)
	list := wantStatus(t, "royalties once verified", p.Get(t, "/api/rights/royalties", u.Token), http.StatusOK)
	if list["total"] != 1.0 || list["items"].([]any)[0].(map[string]any)["eventId"] != before {
		t.Fatalf("royalties once verified = %v", list)
	}

	royalty(after, 800)
	harness.Eventually(t, 45*time.Second, "the verified owner's royalty on the stream", func() bool { return stream.has(after) })
	if stream.has(before) {
		t.Fatal("the royalty recorded before verification reached the account's event stream")
	}
}
