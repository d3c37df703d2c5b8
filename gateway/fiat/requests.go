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

type requestJSON struct {
	ID             string     `json:"id"`
	Token          string     `json:"token"`
	PayURL         string     `json:"payUrl"`
	Status         string     `json:"status"`
	Amount         int64      `json:"amount"`
	Currency       string     `json:"currency"`
	Description    string     `json:"description"`
	Views          int        `json:"views"`
	MaxViews       int        `json:"maxViews"`
	RemainingViews int        `json:"remainingViews"`
	ExpiresAt      time.Time  `json:"expiresAt"`
	CreatedAt      time.Time  `json:"createdAt"`
	PaidAt         *time.Time `json:"paidAt,omitempty"`
}

func (h *Handlers) toRequestJSON(r store.PaymentRequest) requestJSON {
	return requestJSON{ID: r.ID, Token: r.Token, PayURL: h.payURL(r.Token), Status: r.Status, Amount: r.Amount,
		Currency: r.Currency, Description: r.Description, Views: r.Views, MaxViews: r.MaxViews,
		RemainingViews: max(r.MaxViews-r.Views, 0), ExpiresAt: r.ExpiresAt.UTC(), CreatedAt: r.CreatedAt.UTC(), PaidAt: r.PaidAt}
}

type createRequestReq struct {
	WalletID         string      `json:"walletId"`
	Amount           bind.Amount `json:"amount"`
	AmountKzt        bind.Amount `json:"amountKzt"`
	Description      string      `json:"description"`
	ExpiresInSeconds *int64      `json:"expiresInSeconds"`
	MaxViews         *int64      `json:"maxViews"`
}

func (h *Handlers) createRequest(c *fiber.Ctx) error {
	var req createRequestReq
	if err := bind.JSON(c, &req); err != nil {
		return err
	}
	wid, desc := clean(req.WalletID), strings.Clone(strings.TrimSpace(req.Description))
	amountField := req.Amount
	if !amountField.Set && req.AmountKzt.Set {
		amountField = req.AmountKzt
	}
	ttl, views := int64(DefaultRequestTTL), int64(DefaultMaxViews)
	if req.ExpiresInSeconds != nil {
		ttl = *req.ExpiresInSeconds
	}
	if req.MaxViews != nil {
		views = *req.MaxViews
	}
	var v bind.Validator
	if v.Required("walletId", wid) {
		v.MaxLen("walletId", wid, maxRef)
	}
	amount := v.Amount("amount", amountField)
	v.MaxLen("description", desc, bind.MaxMemo)
	v.Check(ttl >= 1 && ttl <= MaxRequestTTL, "expiresInSeconds", fmt.Sprintf("must be between 1 and %d", MaxRequestTTL))
	v.Check(views >= 1 && views <= MaxMaxViews, "maxViews", fmt.Sprintf("must be between 1 and %d", MaxMaxViews))
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
	return c.Status(http.StatusCreated).JSON(h.toRequestJSON(r))
}

// wantsHTML reports whether the client asked for the HTML pay page.
func wantsHTML(c *fiber.Ctx) bool { return strings.Contains(c.Get(fiber.HeaderAccept), "text/html") }

// viewRequest serves the public request: one view per read (see
// schemas.RequestView), expiring it by views or time with request.expired queued in
// the same transaction.
func (h *Handlers) viewRequest(c *fiber.Ctx) error {
	token := clean(c.Params("token"))
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
	return c.JSON(h.toRequestJSON(r))
}

func (h *Handlers) requestMissing(c *fiber.Ctx, html bool) error {
	if html {
		return h.renderPayPage(c, http.StatusNotFound, store.PaymentRequest{})
	}
	return errRequestNotFound
}

type payRequestReq struct {
	WalletID string `json:"walletId"`
}

// payRequest pays the request from the caller's wallet through the fiat
// consumer, keyed by the payer wallet (the source of the money).
func (h *Handlers) payRequest(c *fiber.Ctx) error {
	token := clean(c.Params("token"))
	var req payRequestReq
	if err := bind.JSON(c, &req); err != nil {
		return err
	}
	wid := clean(req.WalletID)
	var v bind.Validator
	if v.Required("walletId", wid) {
		v.MaxLen("walletId", wid, maxRef)
	}
	if err := v.Err(); err != nil {
		return err
	}
	if !validRequestToken(token) {
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
func (h *Handlers) openRequests(c *fiber.Ctx, userID string) ([]requestJSON, error) {
	rs, err := h.commerce.OpenRequestsOf(c.UserContext(), userID, openRequestsOnBoard)
	if err != nil {
		return nil, err
	}
	now := h.now()
	out := make([]requestJSON, 0, len(rs))
	for _, r := range rs {
		if schemas.RequestExpiryReason(r.Views, r.MaxViews, r.ExpiresAt, now) != "" {
			continue // due; the expirer is about to mark it
		}
		out = append(out, h.toRequestJSON(r))
	}
	return out, nil
}
