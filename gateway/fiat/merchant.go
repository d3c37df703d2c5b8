package fiat

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/commands"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
	spipeline "github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/topics"
)

// CommerceStore is what the merchant, payment-request and reconciliation
// handlers read and write directly (never balances).
type CommerceStore interface {
	CreateMerchantKey(ctx context.Context, k store.MerchantKey, max int) error
	MerchantKeysOf(ctx context.Context, userID string) ([]store.MerchantKey, error)
	MerchantKey(ctx context.Context, id string) (store.MerchantKey, error)
	MerchantKeyByHash(ctx context.Context, hash string) (store.MerchantKey, error)
	RevokeMerchantKey(ctx context.Context, userID, id string, now time.Time, audit store.AuditRow) (store.MerchantKey, error)
	CreateAuthorization(ctx context.Context, a store.Authorization, audit store.AuditRow) error
	AuthorizationsOf(ctx context.Context, customerUserID string) ([]store.Authorization, error)
	ActiveAuthorization(ctx context.Context, walletID, merchantUserID string) (store.Authorization, error)
	RevokeAuthorization(ctx context.Context, customerUserID, id string, now time.Time) (store.Authorization, error)
	ChargeByRef(ctx context.Context, merchantUserID, paymentRef string) (store.Charge, error)
	CreateRequest(ctx context.Context, r store.PaymentRequest) error
	RequestByToken(ctx context.Context, token string) (store.PaymentRequest, error)
	ViewRequest(ctx context.Context, token string, view func(r *store.PaymentRequest) ([]spipeline.OutboxRow, error)) (store.PaymentRequest, error)
	OpenRequestsOf(ctx context.Context, userID string, limit int) ([]store.PaymentRequest, error)
	Books(ctx context.Context) ([]store.Books, error)
}

// Merchant API keys (decisions.md, Fiat; spec: Authentication 4).
const (
	// KeyPrefix starts every merchant key.
	KeyPrefix = "mk_live_"
	// keyRandomBytes is the entropy of a key: 16 bytes, 32 hex digits.
	keyRandomBytes = 16
	// MaxActiveKeys is the spec's "Active API keys: 3 per user".
	MaxActiveKeys = 3
	// HeaderAPIKey carries the merchant key.
	HeaderAPIKey = "X-API-Key"
)

const endpointCharge = "POST /api/fiat/merchant/charge"

// NewMerchantKey returns a fresh key (KeyPrefix + 32 lower-case hex digits
// read from rnd) and the SHA-256 hex that is stored instead of it.
func NewMerchantKey(rnd io.Reader) (plain, hash string, err error) {
	b := make([]byte, keyRandomBytes)
	if _, err := io.ReadFull(rnd, b); err != nil {
		return "", "", fmt.Errorf("read key entropy: %w", err)
	}
	plain = KeyPrefix + hex.EncodeToString(b)
	return plain, HashKey(plain), nil
}

// HashKey is the stored form of a key: the hex SHA-256 of its text.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// ValidKeyFormat reports whether s looks like a merchant key, so malformed
// headers are refused without a database lookup.
func ValidKeyFormat(s string) bool {
	if len(s) != len(KeyPrefix)+2*keyRandomBytes || !strings.HasPrefix(s, KeyPrefix) {
		return false
	}
	for _, r := range s[len(KeyPrefix):] {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

// keyDisplay is the part of a key shown in listings.
func keyDisplay(plain string) string { return plain[:len(KeyPrefix)+4] + "…" }

var (
	errKeyLimit      = apierr.New(http.StatusTooManyRequests, schemas.CodeKeyLimitReached, "you already hold 3 active API keys; revoke one first")
	errKeyNotFound   = apierr.New(http.StatusNotFound, schemas.CodeNotFound, "no such API key")
	errNotAuthorized = apierr.New(http.StatusForbidden, schemas.CodeChargeNotAuthorized,
		"the wallet owner has not authorized this merchant to charge the wallet (POST /api/fiat/merchant/authorizations)")
)

type keyJSON struct {
	ID        string     `json:"id"`
	Key       string     `json:"key,omitempty"`
	Prefix    string     `json:"prefix"`
	Label     string     `json:"label"`
	Status    string     `json:"status"`
	CreatedAt time.Time  `json:"createdAt"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
}

func toKeyJSON(k store.MerchantKey) keyJSON {
	return keyJSON{ID: k.ID, Prefix: k.Prefix, Label: k.Label, Status: k.Status, CreatedAt: k.CreatedAt.UTC(), RevokedAt: k.RevokedAt}
}

type createKeyReq struct {
	Label string `json:"label"`
}

func (h *Handlers) createKey(c *fiber.Ctx) error {
	var req createKeyReq
	if err := bind.JSON(c, &req); err != nil {
		return err
	}
	label := clean(req.Label)
	var v bind.Validator
	v.MaxLen("label", label, bind.MaxTitle)
	if err := v.Err(); err != nil {
		return err
	}
	plain, hash, err := NewMerchantKey(rand.Reader)
	if err != nil {
		return err
	}
	p, _ := auth.User(c)
	k := store.MerchantKey{ID: schemas.NewID(), UserID: p.UserID, Label: label, Hash: hash, Prefix: keyDisplay(plain),
		Status: "active", CreatedAt: h.now().UTC().Truncate(time.Microsecond)}
	if err := h.commerce.CreateMerchantKey(c.UserContext(), k, MaxActiveKeys); err != nil {
		if errors.Is(err, store.ErrKeyLimit) {
			return errKeyLimit
		}
		return err
	}
	out := toKeyJSON(k)
	out.Key = plain
	return c.Status(http.StatusCreated).JSON(out)
}

func (h *Handlers) listKeys(c *fiber.Ctx) error {
	p, _ := auth.User(c)
	ks, err := h.commerce.MerchantKeysOf(c.UserContext(), p.UserID)
	if err != nil {
		return err
	}
	items := make([]keyJSON, len(ks))
	for i, k := range ks {
		items[i] = toKeyJSON(k)
	}
	return c.JSON(fiber.Map{"items": items})
}

func (h *Handlers) revokeKey(c *fiber.Ctx) error {
	p, _ := auth.User(c)
	id := clean(c.Params("id"))
	now := h.now().UTC()
	k, err := h.commerce.RevokeMerchantKey(c.UserContext(), p.UserID, id, now, store.AuditRow{ID: schemas.NewID(),
		Actor: p.UserID, Action: "merchant.key.revoke", Subject: id, CreatedAt: now})
	if err != nil {
		if isNotFound(err) {
			return errKeyNotFound
		}
		return err
	}
	return c.JSON(toKeyJSON(k))
}

type authorizationJSON struct {
	ID             string     `json:"id"`
	WalletID       string     `json:"walletId"`
	MerchantUserID string     `json:"merchantUserId"`
	MaxAmount      int64      `json:"maxAmount"`
	Remaining      int64      `json:"remaining"`
	Status         string     `json:"status"`
	CreatedAt      time.Time  `json:"createdAt"`
	RevokedAt      *time.Time `json:"revokedAt,omitempty"`
}

func toAuthorizationJSON(a store.Authorization) authorizationJSON {
	return authorizationJSON{ID: a.ID, WalletID: a.WalletID, MerchantUserID: a.MerchantUserID, MaxAmount: a.MaxAmount,
		Remaining: a.Remaining, Status: a.Status, CreatedAt: a.CreatedAt.UTC(), RevokedAt: a.RevokedAt}
}

type createAuthorizationReq struct {
	WalletID       string      `json:"walletId"`
	MerchantKeyID  string      `json:"merchantKeyId"`
	MerchantUserID string      `json:"merchantUserId"`
	MaxAmount      bind.Amount `json:"maxAmount"`
}

// createAuthorization lets a wallet owner authorize a merchant (named by
// one of its key ids, or its user id) to charge the wallet up to maxAmount
// in total. A new authorization replaces the previous one of that merchant
// on that wallet.
func (h *Handlers) createAuthorization(c *fiber.Ctx) error {
	var req createAuthorizationReq
	if err := bind.JSON(c, &req); err != nil {
		return err
	}
	wid, keyID, merchant := clean(req.WalletID), clean(req.MerchantKeyID), clean(req.MerchantUserID)
	var v bind.Validator
	if v.Required("walletId", wid) {
		v.MaxLen("walletId", wid, maxRef)
	}
	v.MaxLen("merchantKeyId", keyID, maxRef)
	v.MaxLen("merchantUserId", merchant, maxRef)
	v.Check(keyID != "" || merchant != "", "merchantKeyId", "merchantKeyId or merchantUserId is required")
	maxAmount := v.Amount("maxAmount", req.MaxAmount)
	if err := v.Err(); err != nil {
		return err
	}
	ctx := c.UserContext()
	w, err := h.ownWallet(c, wid)
	if err != nil {
		return err
	}
	if keyID != "" {
		k, err := h.commerce.MerchantKey(ctx, keyID)
		switch {
		case isNotFound(err) || err == nil && k.Status != "active":
			return apierr.New(http.StatusNotFound, schemas.CodeMerchantNotFound, "no active merchant key has this id")
		case err != nil:
			return err
		case merchant != "" && merchant != k.UserID:
			return apierr.Validation(map[string]string{"merchantUserId": "does not own merchantKeyId"})
		}
		merchant = k.UserID
	}
	p, _ := auth.User(c)
	if merchant == p.UserID {
		return apierr.Validation(map[string]string{"merchantUserId": "must not be yourself"})
	}
	now := h.now().UTC().Truncate(time.Microsecond)
	a := store.Authorization{ID: schemas.NewID(), WalletID: w.ID, CustomerUserID: p.UserID, MerchantUserID: merchant,
		MaxAmount: maxAmount, Remaining: maxAmount, Status: "active", CreatedAt: now}
	if err := h.commerce.CreateAuthorization(ctx, a, store.AuditRow{ID: schemas.NewID(), Actor: p.UserID,
		Action: "merchant.authorize", Subject: a.ID, Amount: maxAmount, Currency: w.Currency,
		Detail: "wallet " + w.ID + " merchant " + merchant, CreatedAt: now}); err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(toAuthorizationJSON(a))
}

func (h *Handlers) listAuthorizations(c *fiber.Ctx) error {
	p, _ := auth.User(c)
	as, err := h.commerce.AuthorizationsOf(c.UserContext(), p.UserID)
	if err != nil {
		return err
	}
	items := make([]authorizationJSON, len(as))
	for i, a := range as {
		items[i] = toAuthorizationJSON(a)
	}
	return c.JSON(fiber.Map{"items": items})
}

func (h *Handlers) revokeAuthorization(c *fiber.Ctx) error {
	p, _ := auth.User(c)
	a, err := h.commerce.RevokeAuthorization(c.UserContext(), p.UserID, clean(c.Params("id")), h.now().UTC())
	if err != nil {
		if isNotFound(err) {
			return apierr.NotFound("no such authorization")
		}
		return err
	}
	return c.JSON(toAuthorizationJSON(a))
}

// merchantKey authenticates X-API-Key: missing, malformed, unknown and
// revoked keys are all 401 key_invalid.
func (h *Handlers) merchantKey(c *fiber.Ctx) (store.MerchantKey, error) {
	key := strings.TrimSpace(c.Get(HeaderAPIKey))
	if !ValidKeyFormat(key) {
		return store.MerchantKey{}, apierr.KeyInvalid()
	}
	k, err := h.commerce.MerchantKeyByHash(c.UserContext(), HashKey(key))
	if err != nil {
		if isNotFound(err) {
			return store.MerchantKey{}, apierr.KeyInvalid()
		}
		return store.MerchantKey{}, err
	}
	if k.Status != "active" {
		return store.MerchantKey{}, apierr.KeyInvalid()
	}
	return k, nil
}

type chargeReq struct {
	WalletID    string      `json:"walletId"`
	Amount      bind.Amount `json:"amount"`
	AmountKzt   bind.Amount `json:"amountKzt"`
	PaymentRef  string      `json:"paymentRef"`
	Description string      `json:"description"`
}

// charge charges a customer wallet the merchant is authorized on. The
// command id is derived from (merchant, paymentRef), so a replay is
// answered from the stored result; a settled charge is also found by the
// unique (merchant, paymentRef) after the 24 h idempotency window.
func (h *Handlers) charge(c *fiber.Ctx) error {
	k, err := h.merchantKey(c)
	if err != nil {
		return err
	}
	var req chargeReq
	if err := bind.JSON(c, &req); err != nil {
		return err
	}
	ref, desc := clean(req.PaymentRef), strings.Clone(req.Description)
	var v bind.Validator
	wid, amount := validateWalletAmount(&v, req.WalletID, req.Amount, req.AmountKzt)
	if v.Required("paymentRef", ref) {
		v.MaxLen("paymentRef", ref, maxRef)
	}
	v.MaxLen("description", desc, bind.MaxMemo)
	if err := v.Err(); err != nil {
		return err
	}
	ctx := c.UserContext()
	prev, err := h.commerce.ChargeByRef(ctx, k.UserID, ref)
	switch {
	case err == nil:
		if prev.CustomerWallet != wid || prev.Amount != amount {
			return apierr.New(http.StatusConflict, apierr.CodeIdempotencyReused,
				"this paymentRef was used for a different charge")
		}
		c.Set("Idempotent-Replayed", "true")
		return c.Status(http.StatusOK).JSON(store.ChargeResultOf(prev, true))
	case !isNotFound(err):
		return err
	}
	cust, err := h.store.Wallet(ctx, wid)
	if err != nil {
		if isNotFound(err) {
			return errWalletNotFound
		}
		return err
	}
	if cust.Kind != store.KindUser {
		return errWalletNotFound
	}
	if cust.UserID == k.UserID {
		return apierr.Validation(map[string]string{"walletId": "must not be one of your own wallets"})
	}
	a, err := h.commerce.ActiveAuthorization(ctx, cust.ID, k.UserID)
	if err != nil {
		if isNotFound(err) {
			return errNotAuthorized
		}
		return err
	}
	merchantWallet, err := h.store.EnsureWallet(ctx, k.UserID, cust.Currency, schemas.NewID(), h.now().UTC())
	if err != nil {
		return err
	}
	env, err := schemas.New(schemas.TypeFiatMerchantCharge, cust.ID, k.UserID, schemas.FiatMerchantCharge{
		ChargeID: schemas.NewID(), MerchantUserID: k.UserID, MerchantKeyID: k.ID, MerchantWalletID: merchantWallet,
		CustomerWalletID: cust.ID, CustomerUserID: cust.UserID, AuthorizationID: a.ID, Amount: amount,
		PaymentRef: ref, Description: desc,
	}, h.now())
	if err != nil {
		return err
	}
	rep, err := commands.Publish(ctx, h.bus, topics.FiatCommands, env, commands.Idempotency{
		Caller: k.UserID, Endpoint: endpointCharge, Key: ref, RequestHash: commands.RequestHash(c.Body())})
	if err != nil {
		return err
	}
	return commands.Respond(c, markReplay(rep))
}

// markReplay turns the stored reply of an already settled charge into the
// spec's replay answer: 200 with idempotent: true and the original charge.
func markReplay(rep schemas.Reply) schemas.Reply {
	if !rep.Replayed || rep.Status < 200 || rep.Status >= 300 {
		return rep
	}
	var body map[string]any
	if err := json.Unmarshal(rep.Body, &body); err != nil {
		return rep
	}
	body["idempotent"] = true
	b, err := json.Marshal(body)
	if err != nil {
		return rep
	}
	rep.Status, rep.Body = http.StatusOK, b
	return rep
}
