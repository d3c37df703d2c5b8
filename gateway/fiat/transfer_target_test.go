package fiat

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fintech/platform/gateway/auth/authtest"
	"github.com/fintech/platform/gateway/server/servertest"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
)

// targetStore resolves transfers for the cache test and counts lookups.
type targetStore struct {
	noStore
	lookups atomic.Int64
}

func (s *targetStore) TransferTarget(_ context.Context, from, toEmail string) (store.Target, error) {
	s.lookups.Add(1)
	t := store.Target{From: store.Wallet{ID: from, UserID: "u1", Currency: "KZT", Kind: store.KindUser, Status: store.StatusActive}}
	switch strings.ToLower(toEmail) {
	case "bob@example.com":
		t.ToUserID, t.ToWalletID = "u2", "w2"
	case "carol@example.com":
		t.ToUserID, t.ToWalletID = "u3", "w3"
	}
	return t, nil
}

// TestTransferTargetCache: a second transfer to the same recipient (any
// case of the e-mail) skips the lookup, and so does a new pair of a wallet
// and a recipient each seen before; an e-mail nobody has is looked up every
// time, so a user who registers later is found at once.
func TestTransferTargetCache(t *testing.T) {
	t.Parallel()
	s := servertest.New()
	tokens := authtest.New(t)
	st := &targetStore{}
	h, err := NewHandlers(Config{PublicBaseURL: "http://localhost", WebhookSecret: "whsec_x", Caps: schemas.FiatCaps{PerTransfer: 1000, DailyDeposit: 1, Monthly: 1000}},
		st, servertest.Sender{}, tokens.Authenticator, noVault{}, servertest.Pass, servertest.DB{}, time.Now, s.Routes)
	if err != nil {
		t.Fatal(err)
	}
	h.Register(s.Root())
	s.Finish()
	token := tokens.Login(t, "u1", "alice@example.com")
	transferFrom := func(from, to string) {
		req := httptest.NewRequest("POST", Prefix+"/transfer", strings.NewReader(`{"fromWalletId":"`+from+`","toEmail":"`+to+`","amount":5}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		if _, err := s.App.Test(req); err != nil {
			t.Fatal(err)
		}
	}
	transfer := func(to string) { transferFrom("w1", to) }
	transfer("bob@example.com")
	transfer("Bob@Example.com")
	if got := st.lookups.Load(); got != 1 {
		t.Fatalf("lookups after two transfers to one recipient = %d, want 1", got)
	}
	transfer("nobody@example.com")
	transfer("nobody@example.com")
	if got := st.lookups.Load(); got != 3 {
		t.Fatalf("lookups after two transfers to an unknown e-mail = %d, want 3", got)
	}
	transferFrom("w4", "carol@example.com") // a new wallet and a new recipient
	transfer("carol@example.com")           // both seen, never together
	if got := st.lookups.Load(); got != 4 {
		t.Fatalf("lookups after a new pair of a known wallet and a known recipient = %d, want 4", got)
	}
}
