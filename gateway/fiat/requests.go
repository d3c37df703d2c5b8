package fiat

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
	spipeline "github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/topics"
)

// Payment request settings (decisions.md, Fiat).
const (
	DefaultRequestTTL   = 86400
	MaxRequestTTL       = 30 * 86400
	DefaultMaxViews     = 100
	MaxMaxViews         = 1_000_000
	requestTokenPrefix  = "pr_"
	requestTokenBytes   = 16
	openRequestsOnBoard = 50
)

var (
	errRequestNotFound = apierr.New(http.StatusNotFound, schemas.CodeRequestNotFound, "no such payment request")
	errRequestGone     = apierr.New(http.StatusGone, schemas.CodeRequestExpired, "the payment request has expired")
)

// NewRequestToken returns a shareable token: "pr_" and 32 hex digits.
func NewRequestToken(rnd io.Reader) (string, error) {
	b := make([]byte, requestTokenBytes)
	if _, err := io.ReadFull(rnd, b); err != nil {
		return "", fmt.Errorf("read token entropy: %w", err)
	}
	return requestTokenPrefix + hex.EncodeToString(b), nil
}

// validRequestToken reports whether s has the token format.
func validRequestToken(s string) bool {
	if len(s) != len(requestTokenPrefix)+2*requestTokenBytes || !strings.HasPrefix(s, requestTokenPrefix) {
		return false
	}
	_, err := hex.DecodeString(s[len(requestTokenPrefix):])
	return err == nil && strings.ToLower(s) == s
}

func (h *Handlers) payURL(token string) string {
	return h.cfg.PublicBaseURL + Prefix + "/requests/" + token
}

// registerRequests mounts the payment requests: create, the public view
// (JSON or the pay page) and paying one.
func (h *Handlers) registerRequests(g server.Router, tok fiber.Handler) {
	server.Post(g, "/requests", server.Op[createRequestRequest]{
		Summary:     "Create a payment request; returns a shareable token and pay URL",
		Description: "Creates a payment request for an amount into one of the caller's wallets, with a token and a pay URL to share. Moves no money.",
		Class:       ratelimit.Write, Handle: h.createRequest,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "the open request", schemas.FiatPaymentRequest{}),
			failsWalletNotFound,
			server.Fails(http.StatusBadRequest, "wallet_inactive: the receiving wallet is frozen or deleted"),
		},
	}, tok)
	server.Get(g, "/requests/:token", server.Op[requestPath]{
		Summary:     "Public payment request (JSON, or the HTML pay page with Accept: text/html); counts one view",
		Description: "Shows a payment request by its token, as JSON or as the HTML pay page. Counts one view; changes nothing else.",
		Public:      true,
		Handle:      h.viewRequest,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the request as JSON, or its pay page with Accept: text/html", schemas.FiatPaymentRequest{}),
			{Status: http.StatusOK, Description: "the request as JSON, or its pay page with Accept: text/html", ContentType: fiber.MIMETextHTML},
			{Status: http.StatusNotFound, Description: "the not-found page", ContentType: fiber.MIMETextHTML},
			{Status: http.StatusGone, Description: "the expired page", ContentType: fiber.MIMETextHTML},
			server.Fails(http.StatusNotFound, "request_not_found: no such payment request (the page with Accept: text/html)"),
			server.Fails(http.StatusGone, "request_expired: the payment request has expired (the page with Accept: text/html)"),
		},
	})
	server.Post(g, "/requests/:token/pay", server.Op[payRequestRequest]{
		Summary:     "Pay a payment request from the caller's wallet",
		Description: "Moves the requested amount from the caller's wallet to the requester's and marks the request paid.",
		Class:       ratelimit.Money, Handle: h.payRequest,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the paid request", schemas.FiatRequestPayResult{}),
			server.Fails(http.StatusNotFound, "request_not_found or wallet_not_found: no such payment request, or no such wallet of the caller "+
				"(or the receiving wallet is gone)"),
			server.Fails(http.StatusBadRequest, "request_paid, request_expired, cannot_pay_own_request, wallet_inactive or insufficient_balance: "+
				"the request is no longer open, is paid from its own wallet, a wallet is not active, or the balance does not cover "+
				"the amount plus the 0.1% fee (insufficient_balance carries required, feeKzt and balance)"),
			server.Fails(http.StatusUnprocessableEntity, "validation_failed or currency_mismatch: a field is missing or invalid (fields names each), "+
				"or the payer wallet is in another currency than the request"),
			failsKYC, failsKeyReused,
		},
	}, tok)
}

// requestPath is the request of an operation on one payment request.
type requestPath struct {
	Token string `path:"token" json:"-" description:"the request's token (pr_ and 32 hex digits)"`
}

func (h *Handlers) toRequest(r store.PaymentRequest) schemas.FiatPaymentRequest {
	return schemas.FiatPaymentRequest{ID: r.ID, Token: r.Token, PayURL: h.payURL(r.Token), Status: r.Status, Amount: r.Amount,
		Currency: r.Currency, Description: r.Description, Views: r.Views, MaxViews: r.MaxViews,
		RemainingViews: max(r.MaxViews-r.Views, 0), ExpiresAt: r.ExpiresAt.UTC(), CreatedAt: r.CreatedAt.UTC(), PaidAt: r.PaidAt}
}

type createRequestRequest struct {
	WalletID         string      `json:"walletId" required:"true" maxLength:"200" description:"the caller's wallet that receives the payment"`
	Amount           bind.Amount `json:"amount" description:"integer minor units (1 to 10^15); amount or amountKzt is required"`
	AmountKzt        bind.Amount `json:"amountKzt" description:"the same as amount: send one (both with different values is refused)"`
	Description      string      `json:"description" maxLength:"500"`
	ExpiresInSeconds *int64      `json:"expiresInSeconds" minimum:"1" maximum:"2592000" description:"lifetime; 86400 when left out"`
	MaxViews         *int64      `json:"maxViews" minimum:"1" maximum:"1000000" description:"public views before it expires; 100 when left out"`
}

func (h *Handlers) createRequest(c *fiber.Ctx, req *createRequestRequest) error {
	wid, desc := clean(req.WalletID), strings.Clone(strings.TrimSpace(req.Description))
	ttl, views := int64(DefaultRequestTTL), int64(DefaultMaxViews)
	if req.ExpiresInSeconds != nil {
		ttl = *req.ExpiresInSeconds
	}
	if req.MaxViews != nil {
		views = *req.MaxViews
	}
	// walletId, description, expiresInSeconds and maxViews are bound by their tags.
	var v bind.Validator
	amount := v.AmountOf("amount", req.Amount, "amountKzt", req.AmountKzt)
	if err := v.Err(); err != nil {
		return err
	}
	w, err := h.ownWallet(c, wid)
	if err != nil {
		return err
	}
	if w.Status != store.StatusActive {
		return apierr.New(http.StatusBadRequest, schemas.CodeWalletInactive, "the wallet is "+w.Status)
	}
	token, err := NewRequestToken(rand.Reader)
	if err != nil {
		return err
	}
	p, _ := auth.User(c)
	now := h.now().UTC().Truncate(time.Microsecond)
	r := store.PaymentRequest{ID: schemas.NewID(), Token: token, UserID: p.UserID, WalletID: w.ID, Amount: amount,
		Currency: w.Currency, Description: desc, Status: schemas.RequestStatusOpen, MaxViews: int(views),
		ExpiresAt: now.Add(time.Duration(ttl) * time.Second), CreatedAt: now}
	if err := h.commerce.CreateRequest(c.UserContext(), r); err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(h.toRequest(r))
}

// wantsHTML reports whether the client asked for the HTML pay page.
func wantsHTML(c *fiber.Ctx) bool { return strings.Contains(c.Get(fiber.HeaderAccept), "text/html") }

// viewRequest serves the public request: one view per read (see
// schemas.RequestView), expiring it by views or time with request.expired queued in
// the same transaction.
func (h *Handlers) viewRequest(c *fiber.Ctx, req *requestPath) error {
	token := clean(req.Token)
	html := wantsHTML(c)
	if !validRequestToken(token) {
		return h.requestMissing(c, html)
	}
	now := h.now().UTC().Truncate(time.Microsecond)
	var gone bool
	r, err := h.commerce.ViewRequest(c.UserContext(), token, func(r *store.PaymentRequest) ([]spipeline.OutboxRow, error) {
		res := schemas.RequestView(r.Status, r.Views, r.MaxViews, r.ExpiresAt, now)
		r.Views, r.Status, gone = res.Views, res.Status, res.Gone
		if res.Expired == "" {
			return nil, nil
		}
		at := now
		r.ExpiredAt, r.ExpiredReason = &at, res.Expired
		env, err := schemas.New(schemas.TypeRequestExpired, r.WalletID, r.UserID, store.RequestExpiredEvent(*r), now)
		if err != nil {
			return nil, err
		}
		row, err := spipeline.EventRow(topics.EventsFiat, env)
		if err != nil {
			return nil, err
		}
		return []spipeline.OutboxRow{row}, nil
	})
	if err != nil {
		if isNotFound(err) {
			return h.requestMissing(c, html)
		}
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	if html {
		status := http.StatusOK
		if gone {
			status = http.StatusGone
		}
		return h.renderPayPage(c, status, r)
	}
	if gone {
		return errRequestGone
	}
	return c.JSON(h.toRequest(r))
}

func (h *Handlers) requestMissing(c *fiber.Ctx, html bool) error {
	if html {
		return h.renderPayPage(c, http.StatusNotFound, store.PaymentRequest{})
	}
	return errRequestNotFound
}

type payRequestRequest struct {
	Token    string `path:"token" json:"-" description:"the request's token (pr_ and 32 hex digits)"`
	WalletID string `json:"walletId" required:"true" maxLength:"200" description:"the caller's wallet that pays, in the request's currency"`
}

// payRequest pays the request from the caller's wallet through the fiat
// consumer, keyed by the payer wallet (the source of the money).
func (h *Handlers) payRequest(c *fiber.Ctx, req *payRequestRequest) error {
	token := clean(req.Token)
	wid := clean(req.WalletID)
	if !validRequestToken(token) { // walletId is bound by its tags
		return errRequestNotFound
	}
	r, err := h.commerce.RequestByToken(c.UserContext(), token)
	if err != nil {
		if isNotFound(err) {
			return errRequestNotFound
		}
		return err
	}
	if _, err := h.ownWallet(c, wid); err != nil {
		return err
	}
	p, _ := auth.User(c)
	return h.send(c, "POST /api/fiat/requests/"+token+"/pay", schemas.TypeFiatRequestPay, wid, schemas.FiatRequestPay{
		RequestID: r.ID, PayerWalletID: wid, PayerUserID: p.UserID, ReceiverWalletID: r.WalletID,
	})
}

// openRequests lists the caller's open payment requests for the dashboard.
func (h *Handlers) openRequests(c *fiber.Ctx, userID string) ([]schemas.FiatPaymentRequest, error) {
	rs, err := h.commerce.OpenRequestsOf(c.UserContext(), userID, openRequestsOnBoard)
	if err != nil {
		return nil, err
	}
	now := h.now()
	out := make([]schemas.FiatPaymentRequest, 0, len(rs))
	for _, r := range rs {
		if schemas.RequestExpiryReason(r.Views, r.MaxViews, r.ExpiresAt, now) != "" {
			continue // due; the expirer is about to mark it
		}
		out = append(out, h.toRequest(r))
	}
	return out, nil
}
