package fiat

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/commands"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/topics"
)

// RefundStore is what the refund handlers read directly; the refunds
// themselves are written by the fiat consumer.
type RefundStore interface {
	ChargeByID(ctx context.Context, id string) (store.Charge, error)
	RefundsOf(ctx context.Context, source, sourceID string, after *store.RefundCursor, limit int) (store.RefundPage, error)
}

// Refund routes.
const (
	pathChargeRefunds  = "/merchant/charges/:id/refunds"
	pathRequestRefunds = "/requests/:token/refunds"
)

var (
	errChargeNotFound = apierr.New(http.StatusNotFound, schemas.CodeChargeNotFound, "no such charge")
	errRequestNotPaid = apierr.New(http.StatusConflict, schemas.CodeRequestNotPaid, "only a paid payment request can be refunded")
)

// registerRefunds mounts the refund routes.
func (h *Handlers) registerRefunds(g server.Router, tok fiber.Handler) {
	refund := []server.Response{
		server.Answers(http.StatusCreated, "the settled refund, with what is refunded and refundable right after it", schemas.FiatRefundResult{}),
		server.Fails(http.StatusBadRequest, "wallet_inactive or insufficient_balance: a wallet of the payment is not active, or the payee's "+
			"wallet does not hold the amount (required, balance)"),
	}
	server.Post(g, pathChargeRefunds, server.Op[refundChargeRequest]{
		Summary:     "Refund a merchant charge, partially or fully (X-API-Key)",
		Description: "Moves the amount back from the merchant's wallet to the customer's, up to what is left of the charge. Records a refund.",
		Caller:      "a merchant, with its merchant API key in the `X-API-Key` header (no bearer token); only its own charges",
		Class:       ratelimit.Money, Public: true, Handle: h.refundCharge,
		Responses: append(refund, failsKeyInvalid,
			server.Fails(http.StatusNotFound, "charge_not_found or wallet_not_found: no such charge of the calling merchant"),
			server.Fails(http.StatusConflict, "refund_exceeds_charge or idempotency_key_reused: beyond what remains refundable "+
				"(refundable, refunded), or the Idempotency-Key came with another body"),
		),
	}, h.requireMerchantKey)
	server.Get(g, pathChargeRefunds, server.Op[listChargeRefundsRequest]{
		Summary:     "Refunds of a merchant charge (X-API-Key)",
		Description: "Lists the refunds of one of the merchant's charges. Read-only.",
		Caller:      "a merchant, with its merchant API key in the `X-API-Key` header (no bearer token); only its own charges",
		Public:      true, Handle: h.listChargeRefunds,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the charge's refunds, newest first", schemas.FiatRefundPage{}),
			failsKeyInvalid,
			server.Fails(http.StatusNotFound, "charge_not_found: no such charge of the calling merchant"),
		},
	}, h.requireMerchantKey)
	server.Post(g, pathRequestRefunds, server.Op[refundRequestRequest]{
		Summary:     "Refund a paid payment request, partially or fully (its creator)",
		Description: "Moves the amount back from the caller's wallet to the payer's, up to what is left of the payment. Only the request's creator; another user's request answers 404.",
		Class:       ratelimit.Money, Handle: h.refundRequest,
		Responses: append(refund,
			server.Fails(http.StatusNotFound, "request_not_found or wallet_not_found: no such payment request of the caller"),
			server.Fails(http.StatusConflict, "request_not_paid, refund_exceeds_charge or idempotency_key_reused: only a paid request can "+
				"be refunded, beyond what remains refundable (refundable, refunded), or the Idempotency-Key came with another body"),
		),
	}, tok)
	server.Get(g, pathRequestRefunds, server.Op[listRequestRefundsRequest]{
		Summary:     "Refunds of an own payment request",
		Description: "Lists the refunds of one of the caller's payment requests. Read-only; another user's request answers 404.",
		Handle:      h.listRequestRefunds,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the request's refunds, newest first", schemas.FiatRefundPage{}),
			server.Fails(http.StatusNotFound, "request_not_found: no such payment request of the caller"),
		},
	}, tok)
}

// refundBody is { amount?, reason? }: an amount given must be a positive
// integer of minor units; reason is at most 500 characters. The body may
// be left out (the whole remaining amount, no reason).
type refundBody struct {
	_      struct{}    `description:"A refund moves exactly amount from the payee's wallet back to the wallet that paid: no fee is charged on a refund, and the fee of the original payment is not returned. Without amount the whole remaining amount is refunded. The refunds of a payment never exceed what was paid: beyond what remains refundable is 409 refund_exceeds_charge (whatever the balance); within it, a wallet that does not hold the amount is 400 insufficient_balance. Idempotency-Key makes retries safe: a replay returns the original refund."`
	Amount bind.Amount `json:"amount" description:"integer minor units (1 to 10^15); the whole remaining amount when left out"`
	Reason string      `json:"reason" maxLength:"500"`
	amount int64
	reason string
}

// BodyIsOptional lets the body be left out.
func (*refundBody) BodyIsOptional() {}

// Validate keeps the trimmed reason and the amount; both are bound by
// their tags (the amount through bind.Amount) and the edge's text check.
func (b *refundBody) Validate() error {
	b.reason = strings.Clone(strings.TrimSpace(b.Reason))
	if b.Amount.Set {
		b.amount = b.Amount.Value
	}
	return nil
}

// refundChargeRequest refunds one charge of the calling merchant.
type refundChargeRequest struct {
	APIKey string `header:"X-API-Key" json:"-" required:"true" pattern:"^mk_live_[0-9a-f]{32}$" description:"the merchant's API key"`
	ID     string `path:"id" json:"-" format:"ksuid"`
	refundBody
}

// refundRequestRequest refunds one paid payment request of the caller.
type refundRequestRequest struct {
	Token string `path:"token" json:"-" description:"the request's token (pr_ and 32 hex digits)"`
	refundBody
}

// listChargeRefundsRequest is a page of a charge's refunds.
type listChargeRefundsRequest struct {
	APIKey string `header:"X-API-Key" json:"-" required:"true" pattern:"^mk_live_[0-9a-f]{32}$" description:"the merchant's API key"`
	ID     string `path:"id" json:"-" format:"ksuid"`
	bind.Paging
}

// listRequestRefundsRequest is a page of a payment request's refunds.
type listRequestRefundsRequest struct {
	Token string `path:"token" json:"-" description:"the request's token (pr_ and 32 hex digits)"`
	bind.Paging
}

// refundCharge refunds a charge of the calling merchant (X-API-Key). Another
// merchant's or an unknown charge is 404. The consumer decides the amount
// under the charge's row lock; the command is keyed by the customer wallet
// (the one that paid) and its id derives from the Idempotency-Key scoped to
// (merchant, this charge's refund endpoint).
func (h *Handlers) refundCharge(c *fiber.Ctx, req *refundChargeRequest) error {
	k := callerKey(c)
	idem, err := commands.KeyOf(c)
	if err != nil {
		return err
	}
	ch, err := h.ownCharge(c, req.ID, k.UserID)
	if err != nil {
		return err
	}
	env, err := schemas.New(schemas.TypeFiatRefund, ch.CustomerWallet, k.UserID, schemas.FiatRefund{
		RefundID: schemas.NewID(), Source: schemas.RefundSourceCharge, ChargeID: ch.ID, RefunderUserID: k.UserID,
		FromWalletID: ch.MerchantWallet, CustomerWalletID: ch.CustomerWallet, Amount: req.amount, Reason: req.reason,
	}, h.now())
	if err != nil {
		return err
	}
	return commands.Exchange(c, h.bus, topics.FiatCommands, env, commands.Idempotency{
		Caller: k.UserID, Endpoint: "POST " + Prefix + "/merchant/charges/" + ch.ID + "/refunds", Key: idem,
		RequestHash: commands.RequestHash(c.Body())})
}

// ownCharge loads the charge of the path that belongs to the merchant.
func (h *Handlers) ownCharge(c *fiber.Ctx, pathID, merchantUserID string) (store.Charge, error) {
	id := clean(pathID)
	if id == "" || len(id) > maxRef {
		return store.Charge{}, errChargeNotFound
	}
	ch, err := h.refunds.ChargeByID(c.UserContext(), id)
	if err != nil {
		if isNotFound(err) {
			return store.Charge{}, errChargeNotFound
		}
		return store.Charge{}, err
	}
	if ch.MerchantUserID != merchantUserID {
		return store.Charge{}, errChargeNotFound
	}
	return ch, nil
}

// ownRequest loads the caller's payment request of the path.
func (h *Handlers) ownRequest(c *fiber.Ctx, pathToken string) (store.PaymentRequest, error) {
	token := clean(pathToken)
	if !validRequestToken(token) {
		return store.PaymentRequest{}, errRequestNotFound
	}
	r, err := h.commerce.RequestByToken(c.UserContext(), token)
	if err != nil {
		if isNotFound(err) {
			return store.PaymentRequest{}, errRequestNotFound
		}
		return store.PaymentRequest{}, err
	}
	p, _ := auth.User(c)
	if r.UserID != p.UserID {
		return store.PaymentRequest{}, errRequestNotFound
	}
	return r, nil
}

// refundRequest refunds the caller's paid payment request to the payer's
// wallet, keyed by that wallet.
func (h *Handlers) refundRequest(c *fiber.Ctx, req *refundRequestRequest) error {
	r, err := h.ownRequest(c, req.Token)
	if err != nil {
		return err
	}
	// Paid is final, so refusing an unpaid request here never refuses the
	// replay of a refund that was made.
	if r.Status != schemas.RequestStatusPaid || r.PayerWallet == "" {
		return errRequestNotPaid
	}
	p, _ := auth.User(c)
	return h.send(c, "POST "+Prefix+"/requests/"+r.Token+"/refunds", schemas.TypeFiatRefund, r.PayerWallet, schemas.FiatRefund{
		RefundID: schemas.NewID(), Source: schemas.RefundSourceRequest, RequestID: r.ID, RefunderUserID: p.UserID,
		FromWalletID: r.WalletID, CustomerWalletID: r.PayerWallet, Amount: req.amount, Reason: req.reason,
	})
}

func (h *Handlers) listChargeRefunds(c *fiber.Ctx, req *listChargeRefundsRequest) error {
	ch, err := h.ownCharge(c, req.ID, callerKey(c).UserID)
	if err != nil {
		return err
	}
	return h.refundList(c, schemas.RefundSourceCharge, ch.ID, ch.Amount, req.Page())
}

func (h *Handlers) listRequestRefunds(c *fiber.Ctx, req *listRequestRefundsRequest) error {
	r, err := h.ownRequest(c, req.Token)
	if err != nil {
		return err
	}
	paid := int64(0)
	if r.Status == schemas.RequestStatusPaid {
		paid = r.Amount
	}
	return h.refundList(c, schemas.RefundSourceRequest, r.ID, paid, req.Page())
}

// refundList answers { items, total, nextCursor, refundedTotal, refundable },
// newest first; the cursor encodes the last item's creation time and id.
func (h *Handlers) refundList(c *fiber.Ctx, source, sourceID string, paid int64, page bind.Page) error {
	var after *store.RefundCursor
	if page.After != "" {
		at, id, ok := strings.Cut(page.After, "|")
		t, err := time.Parse(time.RFC3339Nano, at)
		if !ok || err != nil || id == "" {
			return apierr.InvalidCursor()
		}
		after = &store.RefundCursor{CreatedAt: t, ID: id}
	}
	rp, err := h.refunds.RefundsOf(c.UserContext(), source, sourceID, after, page.Limit+1)
	if err != nil {
		return err
	}
	items := bind.PageOf(rp.Items, page.Limit, func(r store.Refund) string {
		return r.CreatedAt.UTC().Format(time.RFC3339Nano) + "|" + r.ID
	}, store.RefundResultOf)
	return c.JSON(schemas.FiatRefundPage{Items: items.Items, Total: rp.Total, NextCursor: items.NextCursor,
		RefundedTotal: rp.Refunded, Refundable: paid - rp.Refunded})
}
