package fiat

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

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

// refundFeeNote is the fee rule every refund route documents.
const refundFeeNote = "A refund moves exactly `amount` from the payee's wallet back to the wallet that paid: " +
	"no fee is charged on a refund, and the fee of the original payment is not returned. " +
	"The body is `{ amount?, reason? }`; without `amount` the whole remaining amount is refunded. " +
	"The refunds of a payment never exceed what was paid: beyond what remains refundable → 409 " +
	"`refund_exceeds_charge` (whatever the balance); within it, a wallet that does not hold the amount → 400 " +
	"`insufficient_balance`. `Idempotency-Key` makes retries safe: a replay returns the original refund."

var (
	errChargeNotFound = apierr.New(http.StatusNotFound, schemas.CodeChargeNotFound, "no such charge")
	errRequestNotPaid = apierr.New(http.StatusConflict, schemas.CodeRequestNotPaid, "only a paid payment request can be refunded")
)

// registerRefunds mounts the refund routes.
func (h *Handlers) registerRefunds(g server.Router, tok fiber.Handler) {
	g.Post(pathChargeRefunds, ratelimit.Money, "Refund a merchant charge, partially or fully (X-API-Key)", h.refundCharge)
	g.Get(pathChargeRefunds, "Refunds of a merchant charge (X-API-Key)", h.listChargeRefunds)
	g.Post(pathRequestRefunds, ratelimit.Money, "Refund a paid payment request, partially or fully (its creator)", tok, h.refundRequest)
	g.Get(pathRequestRefunds, "Refunds of an own payment request", tok, h.listRequestRefunds)
}

// refundOperation documents the refund routes in the OpenAPI slice.
func refundOperation(r server.Route, op map[string]any) {
	switch r.Path {
	case Prefix + pathChargeRefunds, Prefix + pathRequestRefunds:
	default:
		return
	}
	if r.Path == Prefix+pathChargeRefunds {
		op["parameters"] = append(asList(op["parameters"]), map[string]any{"name": "X-API-Key", "in": "header",
			"required": true, "schema": map[string]any{"type": "string"}})
	}
	if r.Method == http.MethodPost {
		op["description"] = refundFeeNote
		op["requestBody"] = map[string]any{"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"amount": map[string]any{"type": "integer", "format": "int64", "minimum": 1, "maximum": bind.MaxAmount,
					"description": "minor units; default: the whole remaining amount"},
				"reason": map[string]any{"type": "string", "maxLength": bind.MaxMemo},
			},
		}}}}
	}
}

type refundReq struct {
	Amount bind.Amount `json:"amount"`
	Reason string      `json:"reason"`
}

// bindRefund reads { amount?, reason? }: an amount given must be a
// positive integer of minor units; reason is at most 500 characters.
func bindRefund(c *fiber.Ctx) (int64, string, error) {
	var req refundReq
	if len(bytes.TrimSpace(c.Body())) > 0 {
		if err := bind.JSON(c, &req); err != nil {
			return 0, "", err
		}
	}
	reason := strings.Clone(strings.TrimSpace(req.Reason))
	var v bind.Validator
	var amount int64
	if req.Amount.Set {
		amount = v.Amount("amount", req.Amount)
	}
	v.MaxLen("reason", reason, bind.MaxMemo)
	v.Check(utf8.ValidString(reason) && !strings.Contains(reason, "\x00"), "reason", "must be valid UTF-8 without NUL bytes")
	return amount, reason, v.Err()
}

// refundCharge refunds a charge of the calling merchant (X-API-Key). Another
// merchant's or an unknown charge is 404. The consumer decides the amount
// under the charge's row lock; the command is keyed by the customer wallet
// (the one that paid) and its id derives from the Idempotency-Key scoped to
// (merchant, this charge's refund endpoint).
func (h *Handlers) refundCharge(c *fiber.Ctx) error {
	k, err := h.merchantKey(c)
	if err != nil {
		return err
	}
	amount, reason, err := bindRefund(c)
	if err != nil {
		return err
	}
	idem, err := commands.KeyOf(c)
	if err != nil {
		return err
	}
	ch, err := h.ownCharge(c, k.UserID)
	if err != nil {
		return err
	}
	env, err := schemas.New(schemas.TypeFiatRefund, ch.CustomerWallet, k.UserID, schemas.FiatRefund{
		RefundID: schemas.NewID(), Source: schemas.RefundSourceCharge, ChargeID: ch.ID, RefunderUserID: k.UserID,
		FromWalletID: ch.MerchantWallet, CustomerWalletID: ch.CustomerWallet, Amount: amount, Reason: reason,
	}, h.now())
	if err != nil {
		return err
	}
	return commands.Exchange(c, h.bus, topics.FiatCommands, env, commands.Idempotency{
		Caller: k.UserID, Endpoint: "POST " + Prefix + "/merchant/charges/" + ch.ID + "/refunds", Key: idem,
		RequestHash: commands.RequestHash(c.Body())})
}

// ownCharge loads the charge of the path that belongs to the merchant.
func (h *Handlers) ownCharge(c *fiber.Ctx, merchantUserID string) (store.Charge, error) {
	id := clean(c.Params("id"))
	if id == "" || len(id) > maxRef {
		return store.Charge{}, errChargeNotFound
	}
	ch, err := h.store.ChargeByID(c.UserContext(), id)
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
func (h *Handlers) ownRequest(c *fiber.Ctx) (store.PaymentRequest, error) {
	token := clean(c.Params("token"))
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
func (h *Handlers) refundRequest(c *fiber.Ctx) error {
	amount, reason, err := bindRefund(c)
	if err != nil {
		return err
	}
	r, err := h.ownRequest(c)
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
		FromWalletID: r.WalletID, CustomerWalletID: r.PayerWallet, Amount: amount, Reason: reason,
	})
}

func (h *Handlers) listChargeRefunds(c *fiber.Ctx) error {
	k, err := h.merchantKey(c)
	if err != nil {
		return err
	}
	page, err := bind.PageQuery(c)
	if err != nil {
		return err
	}
	ch, err := h.ownCharge(c, k.UserID)
	if err != nil {
		return err
	}
	return h.refundList(c, schemas.RefundSourceCharge, ch.ID, ch.Amount, page)
}

func (h *Handlers) listRequestRefunds(c *fiber.Ctx) error {
	page, err := bind.PageQuery(c)
	if err != nil {
		return err
	}
	r, err := h.ownRequest(c)
	if err != nil {
		return err
	}
	paid := int64(0)
	if r.Status == schemas.RequestStatusPaid {
		paid = r.Amount
	}
	return h.refundList(c, schemas.RefundSourceRequest, r.ID, paid, page)
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
	rp, err := h.store.RefundsOf(c.UserContext(), source, sourceID, after, page.Limit+1)
	if err != nil {
		return err
	}
	var next *string
	if len(rp.Items) > page.Limit {
		rp.Items = rp.Items[:page.Limit]
		last := rp.Items[len(rp.Items)-1]
		cur := bind.Cursor(last.CreatedAt.UTC().Format(time.RFC3339Nano) + "|" + last.ID)
		next = &cur
	}
	items := make([]schemas.FiatRefundResult, len(rp.Items))
	for i, r := range rp.Items {
		items[i] = store.RefundResultOf(r)
	}
	return c.JSON(fiber.Map{"items": items, "total": rp.Total, "nextCursor": next,
		"refundedTotal": rp.Refunded, "refundable": paid - rp.Refunded})
}
