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
	"github.com/swaggest/jsonschema-go"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/commands"
	"github.com/fintech/platform/gateway/htmlpage"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/topics"
)

// DepositStore is what the deposit and review handlers read: one deposit,
// one by checkout session, a user's, and the review queue.
type DepositStore interface {
	Deposit(ctx context.Context, id string) (store.Deposit, error)
	DepositBySession(ctx context.Context, sessionID string) (store.Deposit, error)
	DepositsOf(ctx context.Context, userID string, before schemas.Position, limit int) ([]store.Deposit, error)
	DepositsByStatus(ctx context.Context, status string, before schemas.Position, limit int) ([]store.Deposit, error)
	DepositReviewSummary(ctx context.Context) (store.ReviewSummary, error)
}

// EventPaymentSucceeded is the processor event that credits a deposit.
const EventPaymentSucceeded = "payment_intent.succeeded"

// HeaderSignature is the processor's signature header.
const HeaderSignature = "Stripe-Signature"

// registerDeposits mounts the top-up routes: the checkout session, the
// processor's signed callbacks, the local checkout pages of the embedded
// test processor and the caller's deposit history.
func (h *Handlers) registerDeposits(g server.Router, tok fiber.Handler) {
	deposit := server.Op[depositRequest]{
		Summary:     "Start a top-up checkout; returns the session URL",
		Description: "Opens a checkout session at the card processor for a top-up of one of the caller's wallets and answers its URL; the wallet is credited when the processor reports the payment. Creates a pending deposit.",
		Class:       ratelimit.Money, Handle: h.deposit,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "the open checkout session: send the payer to url", schemas.FiatDepositResult{}),
			server.Fails(http.StatusBadRequest, "wallet_inactive: the wallet is frozen or deleted"),
			failsWalletNotFound, failsKeyReused,
			server.Fails(http.StatusForbidden, "kyc_required: beyond the daily deposit limit of an account without KYC"),
			server.Fails(http.StatusBadGateway, "processor_unavailable: the card processor did not open a checkout session"),
		},
	}
	checkout := deposit
	checkout.Summary = "Create a processor checkout session for a top-up"
	server.Post(g, "/deposit/checkout", checkout, tok)
	server.Post(g, "/deposit", deposit, tok)

	hook := server.Op[webhookRequest]{
		Summary:     "Processor webhook: credits on payment_intent.succeeded",
		Description: "The card processor reports a payment: a verified payment_intent.succeeded credits the deposit's wallet exactly once (a replay credits nothing); other events change nothing.",
		Caller:      "the card processor, signing the body with the `Stripe-Signature` header (no bearer token)",
		Class:       ratelimit.Partner, Public: true, Handle: h.webhook,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the verified event was processed (credited, already credited, kept for review) or needs nothing",
				jsonschema.OneOf(schemas.FiatCreditResult{}, schemas.FiatWebhookIgnored{})),
			server.Fails(http.StatusBadRequest, "signature_invalid or invalid_event: a forged or unreadable event (signature_invalid carries detail); a paid amount or currency that does not match is kept as needs_review, answered 200"),
			server.Fails(http.StatusNotFound, "deposit_not_found or wallet_not_found: the event names no deposit of this platform"),
		},
	}
	server.Post(g, "/deposit/webhook", hook)
	hook.Summary = "Processor direct callback target"
	server.Post(g, "/processor/webhook", hook)
	server.Post(g, "/processor/verify", server.Op[verifyRequest]{
		Summary:     "Verify and apply a processor event",
		Description: "Checks a processor event the caller holds (its signature, amount and deposit) and applies it like the webhook would: credits the deposit's wallet once.",
		Class:       ratelimit.Partner, Handle: h.verify,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the event verified and was applied (or needed nothing)", schemas.FiatVerifyResult{}),
			server.Fails(http.StatusBadRequest, "validation_failed, invalid_event, event_mismatch or signature_invalid: "+
				"a field is missing or of the wrong type (reported as 400, without fields), or the event is forged, unreadable or mismatched"),
			server.Fails(http.StatusNotFound, "deposit_not_found or wallet_not_found: the event names no deposit of this platform"),
		},
	}, tok, badRequestOnInvalid)
	if h.cfg.TestProcessor() {
		// The embedded test processor signs processor events with the real
		// webhook secret: it exists only while no real processor is configured.
		server.Get(g, "/checkout/:sessionId", server.Op[sessionPath]{
			Summary:     "Local checkout page of the embedded test processor",
			Description: "The checkout page of the embedded test processor (only while no real processor is configured). Read-only.",
			Public:      true, Handle: h.checkoutPage,
			Responses: []server.Response{
				{Status: http.StatusOK, Description: "the local checkout page of the test processor", ContentType: fiber.MIMETextHTML},
				server.Fails(http.StatusNotFound, "session_not_found: no such checkout session"),
			},
		})
		server.Post(g, "/checkout/:sessionId/pay", server.Op[sessionPath]{
			Summary:     "Pay a local checkout session (test processor)",
			Description: "Pays a checkout session of the embedded test processor, which then sends the signed payment event that credits the wallet. Test mode only.",
			Caller:      "anyone holding the session id; no token (test processor only)",
			Class:       ratelimit.Write, Public: true, Handle: h.checkoutPay,
			Responses: []server.Response{
				{Status: http.StatusOK, Description: "the checkout page after paying (or already paid)", ContentType: fiber.MIMETextHTML},
				{Status: http.StatusBadGateway, Description: "the checkout page: the payment event could not be delivered", ContentType: fiber.MIMETextHTML},
				server.Fails(http.StatusNotFound, "session_not_found: no such checkout session"),
			},
		})
	}
	server.Get(g, "/me/deposits", server.Op[listDepositsRequest]{
		Summary:     "Own deposit history",
		Description: "Pages through the caller's deposits, newest first, with their status. Read-only.",
		Handle:      h.listDeposits,
		Responses:   []server.Response{server.Answers(http.StatusOK, "the caller's deposits, newest first", schemas.Page[schemas.FiatDeposit]{})},
	}, tok)
}

// badRequestOnInvalid answers the validation failures of the route it
// guards (a field missing or of the wrong type) as 400 validation_failed
// without fields: problems with a processor call are 400 (spec: Errors,
// rule 1).
func badRequestOnInvalid(c *fiber.Ctx) error {
	err := c.Next()
	var ae *apierr.Error
	if errors.As(err, &ae) && ae.Status == http.StatusUnprocessableEntity && ae.Code == schemas.CodeValidationFailed {
		ae = ae.With(nil)
		ae.Status = http.StatusBadRequest
		return ae
	}
	return err
}

type depositRequest struct {
	WalletID  string      `json:"walletId" required:"true" maxLength:"200" format:"ksuid" description:"one of the caller's wallets"`
	Amount    bind.Amount `json:"amount" description:"integer minor units (1 to 10^15); amount or amountKzt is required"`
	AmountKzt bind.Amount `json:"amountKzt" description:"the same as amount (the spec's name): send one (both with different values is refused)"`
}

// deposit opens a checkout session for a top-up. The session is recorded by
// the consumer, which also enforces the daily cap before KYC.
func (h *Handlers) deposit(c *fiber.Ctx, req *depositRequest) error {
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

// listDepositsRequest is a page of the caller's deposits.
type listDepositsRequest struct{ bind.TimePaging }

func (h *Handlers) listDeposits(c *fiber.Ctx, req *listDepositsRequest) error {
	page := req.Page()
	p, _ := auth.User(c)
	ds, err := h.deposits.DepositsOf(c.UserContext(), p.UserID, req.Position(), page.Limit+1)
	if err != nil {
		return err
	}
	return c.JSON(depositPage(ds, page.Limit))
}

// depositPage is one page of deposits, read with limit+1 rows so that a
// further page shows as nextCursor.
func depositPage(ds []store.Deposit, limit int) schemas.Page[schemas.FiatDeposit] {
	return bind.PageOf(ds, limit, func(d store.Deposit) string {
		return schemas.Position{At: d.CreatedAt, ID: d.ID}.String()
	}, func(d store.Deposit) schemas.FiatDeposit {
		v := schemas.FiatDeposit{ID: d.ID, DepositID: d.ID, WalletID: d.WalletID, Amount: d.Amount, Currency: d.Currency,
			Status: d.Status, SessionID: d.SessionID, URL: d.URL, TransactionID: d.TransactionID,
			CreatedAt: d.CreatedAt, CompletedAt: d.CompletedAt, PaymentOf: d.PaymentOf}
		if d.PaidCurrency != "" {
			paid := d.PaidAmount
			v.PaidAmount, v.PaidCurrency = &paid, d.PaidCurrency
		}
		return v
	})
}

// webhookRequest is the processor's signed callback: a Stripe event. The
// body is verified byte for byte against Stripe-Signature before it is
// read, so it is not bound (bind.RawBody); the fields describe it.
type webhookRequest struct {
	_         struct{}    `description:"A Stripe event, verified against Stripe-Signature before it is read."`
	Signature string      `header:"Stripe-Signature" json:"-" required:"true" description:"t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<body>\" with the webhook secret>; 300 s tolerance"`
	ID        string      `json:"id" required:"true" description:"the processor's event id; a replayed event gets the first answer"`
	Type      string      `json:"type" required:"true" description:"payment_intent.succeeded credits a deposit; other types are acknowledged and ignored"`
	Data      webhookData `json:"data"`
}

// BodyIsRaw leaves the body to the handler (the signature covers its bytes).
func (webhookRequest) BodyIsRaw() {}

// webhookData holds the event's object.
type webhookData struct {
	Object paymentIntent `json:"object"`
}

// paymentIntent is the part of a payment_intent object the platform reads.
type paymentIntent struct {
	ID       string            `json:"id"`
	Amount   int64             `json:"amount" description:"integer minor units; must be the deposit's"`
	Currency string            `json:"currency" description:"lower-case ISO 4217 code; must be the deposit's"`
	Metadata map[string]string `json:"metadata" description:"depositId names the deposit to credit"`
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
	d, err := h.deposits.Deposit(ctx, depositID)
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
func (h *Handlers) webhook(c *fiber.Ctx, req *webhookRequest) error {
	payload := bytes.Clone(c.Body())
	out, evID, err := h.processEvent(c.UserContext(), payload, req.Signature)
	if err != nil {
		return err
	}
	if out.ignored {
		return c.JSON(schemas.FiatWebhookIgnored{Received: true, Ignored: true, EventID: evID})
	}
	rep := out.reply
	if rep.Status == http.StatusOK && rep.Replayed {
		var cr schemas.FiatCreditResult
		if json.Unmarshal(rep.Body, &cr) == nil {
			cr.Idempotent = true
			c.Set(server.HeaderIdempotentReplayed, "true")
			return c.JSON(cr)
		}
	}
	return commands.Respond(c, rep)
}

type verifyRequest struct {
	EventID            string `json:"event_id" required:"true" description:"the id inside raw_payload"`
	EventType          string `json:"event_type" required:"true" description:"the type inside raw_payload"`
	RawPayload         string `json:"raw_payload" required:"true" description:"the event exactly as the processor signed it"`
	ProcessorSignature string `json:"processor_signature" required:"true" description:"its Stripe-Signature header"`
}

// Validate requires every field (badRequestOnInvalid makes it a 400).
func (req *verifyRequest) Validate() error {
	var v bind.Validator
	v.Required("event_id", req.EventID)
	v.Required("event_type", req.EventType)
	v.Required("raw_payload", req.RawPayload)
	v.Required("processor_signature", req.ProcessorSignature)
	return v.Err()
}

// verify checks a processor event handed in by a platform caller and
// applies it like the webhook. Problems with the request are 400 (spec:
// Errors, rule 1), including missing fields.
func (h *Handlers) verify(c *fiber.Ctx, req *verifyRequest) error {
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
		return c.JSON(schemas.FiatVerifyResult{OK: true, EventID: evID})
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
	return c.JSON(schemas.FiatVerifyResult{OK: true, Anchored: ledgerID != nil, LedgerID: ledgerID,
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

// sessionPath is the request of a local checkout page.
type sessionPath struct {
	SessionID string `path:"sessionId" json:"-" description:"the checkout session id (cs_test_…)"`
}

func (h *Handlers) sessionDeposit(c *fiber.Ctx, sessionID string) (store.Deposit, error) {
	d, err := h.deposits.DepositBySession(c.UserContext(), sessionID)
	if err != nil {
		if isNotFound(err) {
			return d, apierr.New(http.StatusNotFound, schemas.CodeSessionNotFound, "no such checkout session")
		}
		return d, err
	}
	return d, nil
}

// checkoutPage is the local checkout page of the embedded test processor.
func (h *Handlers) checkoutPage(c *fiber.Ctx, req *sessionPath) error {
	d, err := h.sessionDeposit(c, req.SessionID)
	if err != nil {
		return err
	}
	return h.renderCheckout(c, d, http.StatusOK, "")
}

// checkoutPay is the Pay button: the embedded test processor sends the
// signed payment_intent.succeeded webhook to the platform's own webhook
// endpoint, exactly as the real processor would.
func (h *Handlers) checkoutPay(c *fiber.Ctx, req *sessionPath) error {
	d, err := h.sessionDeposit(c, req.SessionID)
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
	if d2, err := h.deposits.Deposit(c.UserContext(), d.ID); err == nil {
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
