package fiat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/commands"
	"github.com/fintech/platform/gateway/htmlpage"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/topics"
)

// EventPaymentSucceeded is the processor event that credits a deposit.
const EventPaymentSucceeded = "payment_intent.succeeded"

// HeaderSignature is the processor's signature header.
const HeaderSignature = "Stripe-Signature"

type depositReq struct {
	WalletID  string      `json:"walletId"`
	Amount    bind.Amount `json:"amount"`
	AmountKzt bind.Amount `json:"amountKzt"`
}

// deposit opens a checkout session for a top-up. The session is recorded by
// the consumer, which also enforces the daily cap before KYC.
func (h *Handlers) deposit(c *fiber.Ctx) error {
	var req depositReq
	if err := bind.JSON(c, &req); err != nil {
		return err
	}
	var v bind.Validator
	wid, amount := validateWalletAmount(&v, req.WalletID, req.Amount, req.AmountKzt)
	if err := v.Err(); err != nil {
		return err
	}
	w, err := h.ownWallet(c, wid)
	if err != nil {
		return err
	}
	p, _ := auth.User(c)
	depositID := schemas.NewID()
	sess, err := h.checkout.Open(c.UserContext(), depositID, amount, w.Currency)
	if err != nil {
		return apierr.New(http.StatusBadGateway, schemas.CodeProcessorUnavailable, "the card processor did not open a checkout session").
			Because(err)
	}
	return h.send(c, endpointDeposit, schemas.TypeFiatDepositCreate, wid, schemas.FiatDepositCreate{
		DepositID: depositID, SessionID: sess.ID, URL: sess.URL, WalletID: wid, UserID: p.UserID, Amount: amount,
	})
}

type depositJSON struct {
	ID            string     `json:"id"`
	DepositID     string     `json:"depositId"`
	WalletID      string     `json:"walletId"`
	Amount        int64      `json:"amount"`
	Currency      string     `json:"currency"`
	Status        string     `json:"status"`
	SessionID     string     `json:"sessionId"`
	URL           string     `json:"url"`
	TransactionID string     `json:"transactionId,omitempty"`
	CreatedAt     time.Time  `json:"createdAt"`
	CompletedAt   *time.Time `json:"completedAt,omitempty"`
}

func (h *Handlers) listDeposits(c *fiber.Ctx) error {
	page, err := bind.PageQuery(c)
	if err != nil {
		return err
	}
	p, _ := auth.User(c)
	ds, err := h.store.DepositsOf(c.UserContext(), p.UserID, page.After, page.Limit+1)
	if err != nil {
		return err
	}
	return depositPage(c, ds, page.Limit)
}

// depositPage answers one page of deposits, read with limit+1 rows so that
// a further page shows as nextCursor.
func depositPage(c *fiber.Ctx, ds []store.Deposit, limit int) error {
	var next *string
	if len(ds) > limit {
		ds = ds[:limit]
		cur := bind.Cursor(ds[len(ds)-1].ID)
		next = &cur
	}
	items := make([]depositJSON, len(ds))
	for i, d := range ds {
		items[i] = depositJSON{ID: d.ID, DepositID: d.ID, WalletID: d.WalletID, Amount: d.Amount, Currency: d.Currency,
			Status: d.Status, SessionID: d.SessionID, URL: d.URL, TransactionID: d.TransactionID,
			CreatedAt: d.CreatedAt, CompletedAt: d.CompletedAt}
	}
	return c.JSON(fiber.Map{"items": items, "nextCursor": next})
}

// paymentIntent is the part of a payment_intent object the platform reads.
type paymentIntent struct {
	ID       string            `json:"id"`
	Amount   int64             `json:"amount"`
	Currency string            `json:"currency"`
	Metadata map[string]string `json:"metadata"`
}

// eventOutcome is what processing one verified processor event produced.
type eventOutcome struct {
	reply   schemas.Reply
	ignored bool // not an event that credits anything
}

// processEvent verifies a signed processor payload and, for
// payment_intent.succeeded naming one of our deposits, sends the credit
// command. The command id is derived from the event id, so a replayed event
// gets the stored answer; the consumer credits each deposit once whatever
// the number of events naming it.
func (h *Handlers) processEvent(ctx context.Context, payload []byte, header string) (eventOutcome, string, error) {
	ev, err := webhook.ConstructEventWithOptions(payload, header, h.cfg.WebhookSecret,
		webhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true, Tolerance: webhook.DefaultTolerance})
	if err != nil {
		if detail, ok := signatureDetail(err); ok {
			return eventOutcome{}, "", errSignature.With(map[string]any{"detail": detail})
		}
		return eventOutcome{}, "", apierr.New(http.StatusBadRequest, schemas.CodeInvalidEvent, "the signed payload is not a processor event")
	}
	if ev.ID == "" {
		return eventOutcome{}, "", apierr.New(http.StatusBadRequest, schemas.CodeInvalidEvent, "the event has no id")
	}
	if string(ev.Type) != EventPaymentSucceeded {
		return eventOutcome{ignored: true}, ev.ID, nil
	}
	if ev.Data == nil || len(ev.Data.Raw) == 0 {
		return eventOutcome{}, ev.ID, apierr.New(http.StatusBadRequest, schemas.CodeInvalidEvent, "the event has no data.object")
	}
	var pi paymentIntent
	if err := json.Unmarshal(ev.Data.Raw, &pi); err != nil {
		return eventOutcome{}, ev.ID, apierr.New(http.StatusBadRequest, schemas.CodeInvalidEvent, "data.object is not a payment intent")
	}
	depositID := strings.TrimSpace(pi.Metadata["depositId"])
	if depositID == "" {
		// Not one of ours (no deposit named): acknowledged, nothing to do.
		return eventOutcome{ignored: true}, ev.ID, nil
	}
	d, err := h.store.Deposit(ctx, depositID)
	if err != nil {
		if isNotFound(err) {
			return eventOutcome{}, ev.ID, apierr.New(http.StatusNotFound, schemas.CodeDepositNotFound, "no deposit "+depositID)
		}
		return eventOutcome{}, ev.ID, err
	}
	// The processor sends lower-case currency codes; anything else does not
	// match any deposit.
	cur := strings.ToUpper(pi.Currency)
	if pi.Currency != strings.ToLower(pi.Currency) {
		cur = "not-lower-case:" + pi.Currency
	}
	env, err := schemas.New(schemas.TypeFiatDepositCredit, d.WalletID, d.UserID, schemas.FiatDepositCredit{
		DepositID: d.ID, WalletID: d.WalletID, EventID: ev.ID, Amount: pi.Amount, Currency: cur,
	}, h.now())
	if err != nil {
		return eventOutcome{}, ev.ID, err
	}
	rep, err := commands.Publish(ctx, h.bus, topics.FiatCommands, env,
		commands.Idempotency{Caller: "processor", Endpoint: "deposit.event", Key: ev.ID})
	if err != nil {
		return eventOutcome{}, ev.ID, err
	}
	return eventOutcome{reply: rep}, ev.ID, nil
}

// signatureDetail explains a signature failure; ok is false for errors that
// are not about the signature (a verified payload that is not an event).
func signatureDetail(err error) (string, bool) {
	switch {
	case errors.Is(err, webhook.ErrNotSigned):
		return "missing Stripe-Signature header", true
	case errors.Is(err, webhook.ErrTooOld):
		return "timestamp outside the 300 s tolerance", true
	case errors.Is(err, webhook.ErrInvalidHeader):
		return "malformed Stripe-Signature header", true
	case errors.Is(err, webhook.ErrNoValidSignature):
		return "bad signature", true
	}
	return "", false
}

// webhook is the processor's callback: it answers 2xx for every event it
// verified (also replays and events it does not act on) so the processor
// stops retrying, and 4xx for forged or unusable ones.
func (h *Handlers) webhook(c *fiber.Ctx) error {
	payload := bytes.Clone(c.Body())
	out, evID, err := h.processEvent(c.UserContext(), payload, c.Get(HeaderSignature))
	if err != nil {
		return err
	}
	if out.ignored {
		return c.JSON(fiber.Map{"received": true, "ignored": true, "eventId": evID})
	}
	rep := out.reply
	if rep.Status == http.StatusOK && rep.Replayed {
		var cr schemas.FiatCreditResult
		if json.Unmarshal(rep.Body, &cr) == nil {
			cr.Idempotent = true
			c.Set("Idempotent-Replayed", "true")
			return c.JSON(cr)
		}
	}
	return commands.Respond(c, rep)
}

type verifyReq struct {
	EventID            string `json:"event_id"`
	EventType          string `json:"event_type"`
	RawPayload         string `json:"raw_payload"`
	ProcessorSignature string `json:"processor_signature"`
}

type verifyResp struct {
	OK         bool    `json:"ok"`
	Anchored   bool    `json:"anchored"`
	LedgerID   *string `json:"ledger_id"`
	Idempotent bool    `json:"idempotent"`
	EventID    string  `json:"event_id"`
}

// verify checks a processor event handed in by a platform caller and
// applies it like the webhook. Problems with the request are 400 (spec:
// Errors, rule 1), including missing fields.
func (h *Handlers) verify(c *fiber.Ctx) error {
	var req verifyReq
	if err := bind.JSON(c, &req); err != nil {
		if ae, ok := err.(*apierr.Error); ok && ae.Status == http.StatusUnprocessableEntity {
			ae = ae.With(nil)
			ae.Status = http.StatusBadRequest
			return ae
		}
		return err
	}
	var v bind.Validator
	v.Required("event_id", req.EventID)
	v.Required("event_type", req.EventType)
	v.Required("raw_payload", req.RawPayload)
	v.Required("processor_signature", req.ProcessorSignature)
	if err := v.Err(); err != nil {
		ae := err.(*apierr.Error).With(nil)
		ae.Status = http.StatusBadRequest
		return ae
	}
	payload := []byte(req.RawPayload)
	var head struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	if json.Unmarshal(payload, &head) != nil {
		return apierr.New(http.StatusBadRequest, schemas.CodeInvalidEvent, "raw_payload is not a JSON event")
	}
	if head.ID != req.EventID || head.Type != req.EventType {
		return apierr.New(http.StatusBadRequest, schemas.CodeEventMismatch, "event_id or event_type differ from raw_payload")
	}
	out, evID, err := h.processEvent(c.UserContext(), payload, req.ProcessorSignature)
	if err != nil {
		return err
	}
	if out.ignored {
		return c.JSON(verifyResp{OK: true, EventID: evID})
	}
	rep := out.reply
	if rep.Status != http.StatusOK {
		return commands.Respond(c, rep)
	}
	var cr schemas.FiatCreditResult
	if err := json.Unmarshal(rep.Body, &cr); err != nil {
		return fmt.Errorf("decode credit reply: %w", err)
	}
	var ledgerID *string
	if cr.LedgerEntryID != "" {
		ledgerID = &cr.LedgerEntryID
	}
	return c.JSON(verifyResp{OK: true, Anchored: ledgerID != nil, LedgerID: ledgerID,
		Idempotent: rep.Replayed || cr.Idempotent, EventID: evID})
}

var checkoutTmpl = template.Must(template.New("checkout").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Checkout</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style nonce="{{.Nonce}}">body{font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem}
.card{border:1px solid #ccc;border-radius:8px;padding:1.5rem}button{font-size:1.1rem;padding:.6rem 1.4rem}</style>
</head><body><div class="card">
<h1>Top up your wallet</h1>
<p>Amount: <strong>{{.Major}} {{.Currency}}</strong></p>
<p>Session: <code>{{.SessionID}}</code></p>
{{if eq .Status "pending"}}
<form method="post" action="{{.PayPath}}"><button type="submit">Pay</button></form>
<p><small>Test processor: no card is charged.</small></p>
{{else}}<p>Status: <strong>{{.Status}}</strong></p>{{end}}
{{if .Message}}<p>{{.Message}}</p>{{end}}
</div></body></html>`))

type checkoutView struct {
	SessionID, Currency, Major, Status, PayPath, Message, Nonce string
}

func formatMajor(amount int64) string {
	return fmt.Sprintf("%d.%02d", amount/100, amount%100)
}

func (h *Handlers) renderCheckout(c *fiber.Ctx, d store.Deposit, status int, msg string) error {
	v := checkoutView{SessionID: d.SessionID, Currency: d.Currency, Major: formatMajor(d.Amount), Status: d.Status,
		Message: msg, PayPath: Prefix + "/checkout/" + d.SessionID + "/pay"}
	return htmlpage.Render(c, status, checkoutTmpl, htmlpage.Policy{FormSelf: true}, func(nonce string) any {
		v.Nonce = nonce
		return v
	})
}

func (h *Handlers) sessionDeposit(c *fiber.Ctx) (store.Deposit, error) {
	d, err := h.store.DepositBySession(c.UserContext(), c.Params("sessionId"))
	if err != nil {
		if isNotFound(err) {
			return d, apierr.New(http.StatusNotFound, schemas.CodeSessionNotFound, "no such checkout session")
		}
		return d, err
	}
	return d, nil
}

// checkoutPage is the local checkout page of the embedded test processor.
func (h *Handlers) checkoutPage(c *fiber.Ctx) error {
	d, err := h.sessionDeposit(c)
	if err != nil {
		return err
	}
	return h.renderCheckout(c, d, http.StatusOK, "")
}

// checkoutPay is the Pay button: the embedded test processor sends the
// signed payment_intent.succeeded webhook to the platform's own webhook
// endpoint, exactly as the real processor would.
func (h *Handlers) checkoutPay(c *fiber.Ctx) error {
	d, err := h.sessionDeposit(c)
	if err != nil {
		return err
	}
	if d.Status != "pending" {
		return h.renderCheckout(c, d, http.StatusOK, "This session is already paid.")
	}
	payload, err := TestPaymentEvent("evt_"+schemas.NewID(), d.ID, d.Amount, d.Currency, h.now())
	if err != nil {
		return err
	}
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{
		Payload: payload, Secret: h.cfg.WebhookSecret, Timestamp: h.now()})
	status, msg := h.deliver(c.UserContext(), payload, signed.Header)
	if status/100 != 2 {
		return h.renderCheckout(c, d, http.StatusBadGateway, "The payment could not be delivered: "+msg)
	}
	if d2, err := h.store.Deposit(c.UserContext(), d.ID); err == nil {
		d = d2
	}
	return h.renderCheckout(c, d, http.StatusOK, "Payment received. You can close this page.")
}

// deliver posts a signed event to the platform's webhook endpoint. When the
// public URL does not reach this process (a proxy in front, say) the event
// is applied in process with the same verification.
func (h *Handlers) deliver(ctx context.Context, payload []byte, header string) (int, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.cfg.PublicBaseURL+Prefix+"/deposit/webhook", bytes.NewReader(payload))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(HeaderSignature, header)
		resp, err := h.client.Do(req)
		if err == nil {
			defer resp.Body.Close()
			var body struct {
				Message string `json:"message"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&body)
			return resp.StatusCode, body.Message
		}
	}
	out, _, err := h.processEvent(ctx, payload, header)
	if err != nil {
		return http.StatusBadGateway, err.Error()
	}
	if out.ignored {
		return http.StatusOK, ""
	}
	return out.reply.Status, string(out.reply.Body)
}

// TestPaymentEvent builds the payment_intent.succeeded event the processor
// sends for a paid deposit (Stripe's shape: lower-case currency, amount in
// minor units, our deposit id in the metadata).
func TestPaymentEvent(eventID, depositID string, amount int64, currency string, now time.Time) ([]byte, error) {
	ev := map[string]any{
		"id": eventID, "object": "event", "type": EventPaymentSucceeded, "api_version": "2025-01-27.acacia",
		"created": now.Unix(), "livemode": false, "pending_webhooks": 1,
		"data": map[string]any{"object": map[string]any{
			"id": "pi_" + depositID, "object": "payment_intent", "amount": amount, "amount_received": amount,
			"currency": strings.ToLower(currency), "status": "succeeded",
			"metadata": map[string]string{"depositId": depositID},
		}},
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("encode test event: %w", err)
	}
	return b, nil
}
