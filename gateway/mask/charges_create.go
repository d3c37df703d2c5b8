package mask

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/clientip"
	"github.com/fintech/platform/gateway/commands"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

type createChargeRequest struct {
	MaskID           string      `json:"maskId" required:"true" maxLength:"200"`
	AmountCents      bind.Amount `json:"amountCents" required:"true"`
	Merchant         string      `json:"merchant" required:"true" maxLength:"200"`
	MerchantCategory string      `json:"merchantCategory" maxLength:"200"`
	PaymentRef       string      `json:"paymentRef" required:"true" maxLength:"200" description:"the merchant's reference; a replay of (maskId, paymentRef) answers the first outcome"`
	MerchantUserID   string      `json:"merchantUserId" maxLength:"200" format:"ksuid" description:"the platform user behind the merchant, if any"`
}

func (req createChargeRequest) validate() (schemas.MaskCharge, error) {
	var v bind.Validator
	d := schemas.MaskCharge{
		MaskID:           strings.TrimSpace(req.MaskID),
		Merchant:         strings.TrimSpace(req.Merchant),
		MerchantCategory: strings.TrimSpace(req.MerchantCategory),
		PaymentRef:       strings.TrimSpace(req.PaymentRef),
		MerchantUserID:   strings.TrimSpace(req.MerchantUserID),
	}
	// Every field's presence and length is bound by its tags.
	d.AmountCents = v.Amount("amountCents", req.AmountCents)
	return d, v.Err()
}

// ChargeCommandID is the command id of a charge: deterministic in (owner,
// mask, paymentRef), so that a replay, concurrent or later, is recognised
// by the pipeline and answered with the first outcome.
func ChargeCommandID(userID, maskID, paymentRef string) string {
	return chargeIdempotency(userID, maskID, paymentRef).CommandID()
}

// chargeIdempotency names a charge by its (owner, mask, paymentRef); the
// reference is the key, so no request hash guards it.
func chargeIdempotency(userID, maskID, paymentRef string) commands.Idempotency {
	return commands.Idempotency{Caller: userID, Endpoint: schemas.TypeMaskCharge, Key: maskID + "\x00" + paymentRef}
}

// createCharge publishes the charge to mask.commands keyed by the mask id,
// so every charge of one mask is decided in order by one consumer, and
// answers the decision: 201 authorized, 402 charge_declined, 404 for a mask
// that is not the caller's. A replay of (maskId, paymentRef) answers the
// original outcome with idempotent: true (200 when it was authorized).
func (h *Handlers) createCharge(c *fiber.Ctx, req *createChargeRequest) error {
	d, err := req.validate()
	if err != nil {
		return err
	}
	d.UserID = caller(c)
	d.ClientIP = clientip.String(c)
	env, err := schemas.New(schemas.TypeMaskCharge, d.MaskID, d.UserID, d, h.now())
	if err != nil {
		return err
	}
	rep, err := commands.Publish(c.UserContext(), h.sender, topics.MaskCommands, env,
		chargeIdempotency(d.UserID, d.MaskID, d.PaymentRef))
	if err != nil {
		return err
	}
	if rep.Replayed {
		rep = replayed(rep)
	}
	return commands.Respond(c, rep)
}

// replayed turns the stored first answer to a charge into the answer to its
// replay: idempotent true (also inside a declined answer's charge), and 200
// instead of 201 for an authorized charge. Other answers (404) are kept.
func replayed(rep schemas.Reply) schemas.Reply {
	if rep.Status != http.StatusCreated && rep.Status != http.StatusPaymentRequired {
		return rep
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(rep.Body, &body); err != nil {
		return rep
	}
	body["idempotent"] = json.RawMessage("true")
	if raw, ok := body["charge"]; ok {
		var charge map[string]json.RawMessage
		if err := json.Unmarshal(raw, &charge); err == nil {
			charge["idempotent"] = json.RawMessage("true")
			if b, err := json.Marshal(charge); err == nil {
				body["charge"] = b
			}
		}
	}
	b, err := json.Marshal(body)
	if err != nil {
		return rep
	}
	rep.Body = b
	if rep.Status == http.StatusCreated {
		rep.Status = http.StatusOK
	}
	return rep
}
