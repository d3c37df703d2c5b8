package fiat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
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
	// MaxActiveKeys is the spec's "Active API keys: 3 per user".
	MaxActiveKeys = 3
	// HeaderAPIKey carries the merchant key.
	HeaderAPIKey = "X-API-Key"
)

const endpointCharge = "POST /api/fiat/merchant/charge"

// merchantKeys finds a merchant key (auth.MerchantKeys: mk_live_ and 32
// lower-case hex digits) by its SHA-256, which the store keeps as hex.
func merchantKeys(st CommerceStore) auth.KeyLookup[store.MerchantKey] {
	return auth.KeyLookup[store.MerchantKey]{Kind: auth.MerchantKeys,
		ByHash: func(ctx context.Context, hash []byte) (store.MerchantKey, error) {
			return st.MerchantKeyByHash(ctx, hex.EncodeToString(hash))
		},
		Stored: func(k store.MerchantKey) []byte {
			b, _ := hex.DecodeString(k.Hash)
			return b
		}}
}

// keyDisplay is the part of a key shown in listings.
func keyDisplay(plain string) string { return plain[:len(auth.MerchantKeys.Prefix)+4] + "…" }

var (
	errKeyLimit      = apierr.New(http.StatusTooManyRequests, schemas.CodeKeyLimitReached, "you already hold 3 active API keys; revoke one first")
	errKeyNotFound   = apierr.New(http.StatusNotFound, schemas.CodeNotFound, "no such API key")
	errNotAuthorized = apierr.New(http.StatusForbidden, schemas.CodeChargeNotAuthorized,
		"the wallet owner has not authorized this merchant to charge the wallet (POST /api/fiat/merchant/authorizations)")
)

// registerMerchant mounts the merchant routes: API keys, the customers'
// authorizations and the charge a merchant makes with its key.
func (h *Handlers) registerMerchant(g server.Router, tok fiber.Handler) {
	server.Post(g, "/merchant/keys", server.Op[createKeyRequest]{
		Summary:     "Issue a merchant API key (shown once; 3 active per user)",
		Description: "Mints a merchant API key for the caller; its plaintext is in this answer only (the platform keeps a hash). A user holds at most 3 active keys. Creates a key.",
		KeyScope:    server.NoKeys, // keys never manage keys
		Class:       ratelimit.Write, Handle: h.createKey,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "the new key, with its plaintext (shown only here)", schemas.FiatMerchantKey{}),
			server.Fails(http.StatusTooManyRequests, "key_limit_reached: the caller holds 3 active keys; revoke one first"),
		},
	}, tok)
	server.Get(g, "/merchant/keys", server.Op[server.NoRequest]{
		Summary:     "Own merchant API keys (no plaintext)",
		Description: "Lists the caller's merchant API keys (prefix, status, dates), never their plaintext. Read-only.",
		KeyScope:    server.NoKeys, // keys never manage keys
		Handle:      h.listKeys,
		Responses:   []server.Response{server.Answers(http.StatusOK, "the caller's keys", schemas.FiatItems[schemas.FiatMerchantKey]{})},
	}, tok)
	server.Handle(g, http.MethodDelete, "/merchant/keys/:id", server.Op[keyPath]{
		Summary:     "Revoke an own merchant API key",
		Description: "Revokes one of the caller's merchant API keys; charges with it fail from then on. Another user's key answers 404.",
		KeyScope:    server.NoKeys, // keys never manage keys
		Class:       ratelimit.Write, Handle: h.revokeKey,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the revoked key", schemas.FiatMerchantKey{}),
			server.Fails(http.StatusNotFound, "not_found: no such API key of the caller"),
		},
	}, tok)
	server.Post(g, "/merchant/authorizations", server.Op[createAuthorizationRequest]{
		Summary:     "Authorize a merchant to charge one of your wallets up to maxAmount",
		Description: "Lets a merchant charge one of the caller's wallets up to maxAmount in total. Creates an authorization; moves no money.",
		Class:       ratelimit.Write, Handle: h.createAuthorization,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "the authorization (it replaces the merchant's previous one on the wallet)", schemas.FiatAuthorization{}),
			server.Fails(http.StatusNotFound, "wallet_not_found or merchant_not_found: no such wallet of the caller, or no active merchant key has this id"),
		},
	}, tok)
	server.Get(g, "/merchant/authorizations", server.Op[server.NoRequest]{
		Summary:     "Own merchant authorizations",
		Description: "Lists the authorizations the caller granted to merchants, with what each has charged so far. Read-only.",
		Handle:      h.listAuthorizations,
		Responses:   []server.Response{server.Answers(http.StatusOK, "the caller's authorizations", schemas.FiatItems[schemas.FiatAuthorization]{})},
	}, tok)
	server.Handle(g, http.MethodDelete, "/merchant/authorizations/:id", server.Op[authorizationPath]{
		Summary:     "Revoke a merchant authorization",
		Description: "Revokes an authorization the caller granted; the merchant can no longer charge the wallet. Another user's authorization answers 404.",
		Class:       ratelimit.Write, Handle: h.revokeAuthorization,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the revoked authorization", schemas.FiatAuthorization{}),
			server.Fails(http.StatusNotFound, "not_found: no such authorization of the caller"),
		},
	}, tok)
	server.Post(g, "/merchant/charge", server.Op[chargeRequest]{
		Summary:     "Charge an authorizing customer's wallet (X-API-Key); replay by paymentRef is idempotent",
		Description: "Moves money from a customer's wallet to the merchant's, within the customer's authorization. A repeated paymentRef answers the first charge instead of charging again.",
		Caller:      "a merchant, with its merchant API key in the `X-API-Key` header (no bearer token)",
		Class:       ratelimit.Money,
		Public:      true, Handle: h.charge,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "the settled charge", schemas.FiatChargeResult{}),
			server.Answers(http.StatusOK, "a replay of (merchant, paymentRef): the original charge with idempotent true", schemas.FiatChargeResult{}),
			failsKeyInvalid,
			server.Fails(http.StatusNotFound, "wallet_not_found: no such customer wallet, or the merchant has no wallet in its currency"),
			server.Fails(http.StatusForbidden, "charge_not_authorized, authorization_exceeded or kyc_required: the wallet owner has not authorized "+
				"this merchant, the charge exceeds what remains authorized (remaining), or the customer is beyond the limits without KYC"),
			server.Fails(http.StatusBadRequest, "wallet_inactive or insufficient_balance: a wallet is not active, or the customer balance "+
				"does not cover the amount (required)"),
			server.Fails(http.StatusConflict, "idempotency_key_reused: this paymentRef (or Idempotency-Key) was used for a different charge"),
		},
	}, h.requireMerchantKey)
}

// keyPath is the request of an operation on one merchant key.
type keyPath struct {
	ID string `path:"id" json:"-" format:"ksuid"`
}

// authorizationPath is the request of an operation on one authorization.
type authorizationPath struct {
	ID string `path:"id" json:"-" format:"ksuid"`
}

func toKey(k store.MerchantKey) schemas.FiatMerchantKey {
	return schemas.FiatMerchantKey{ID: k.ID, Prefix: k.Prefix, Label: k.Label, Status: k.Status, CreatedAt: k.CreatedAt.UTC(), RevokedAt: k.RevokedAt}
}

type createKeyRequest struct {
	Label string `json:"label" maxLength:"200"`
}

func (h *Handlers) createKey(c *fiber.Ctx, req *createKeyRequest) error {
	label := clean(req.Label) // bounded by its tag
	plain, hash, err := auth.MerchantKeys.Mint(rand.Reader)
	if err != nil {
		return err
	}
	p, _ := auth.User(c)
	k := store.MerchantKey{ID: schemas.NewID(), UserID: p.UserID, Label: label, Hash: hex.EncodeToString(hash), Prefix: keyDisplay(plain),
		Status: "active", CreatedAt: h.now().UTC().Truncate(time.Microsecond)}
	if err := h.commerce.CreateMerchantKey(c.UserContext(), k, MaxActiveKeys); err != nil {
		if errors.Is(err, store.ErrKeyLimit) {
			return errKeyLimit
		}
		return err
	}
	out := toKey(k)
	out.Key = plain
	return c.Status(http.StatusCreated).JSON(out)
}

func (h *Handlers) listKeys(c *fiber.Ctx, _ *server.NoRequest) error {
	p, _ := auth.User(c)
	ks, err := h.commerce.MerchantKeysOf(c.UserContext(), p.UserID)
	if err != nil {
		return err
	}
	return c.JSON(itemsOf(ks, toKey))
}

func (h *Handlers) revokeKey(c *fiber.Ctx, req *keyPath) error {
	p, _ := auth.User(c)
	id := clean(req.ID)
	now := h.now().UTC()
	k, err := h.commerce.RevokeMerchantKey(c.UserContext(), p.UserID, id, now, store.AuditRow{ID: schemas.NewID(),
		Actor: p.UserID, Action: "merchant.key.revoke", Subject: id, CreatedAt: now})
	if err != nil {
		if isNotFound(err) {
			return errKeyNotFound
		}
		return err
	}
	return c.JSON(toKey(k))
}

func toAuthorization(a store.Authorization) schemas.FiatAuthorization {
	return schemas.FiatAuthorization{ID: a.ID, WalletID: a.WalletID, MerchantUserID: a.MerchantUserID, MaxAmount: a.MaxAmount,
		Remaining: a.Remaining, Status: a.Status, CreatedAt: a.CreatedAt.UTC(), RevokedAt: a.RevokedAt}
}

type createAuthorizationRequest struct {
	WalletID       string      `json:"walletId" required:"true" maxLength:"200" description:"one of the caller's wallets"`
	MerchantKeyID  string      `json:"merchantKeyId" maxLength:"200" description:"an active key of the merchant; merchantKeyId or merchantUserId is required"`
	MerchantUserID string      `json:"merchantUserId" maxLength:"200" description:"the merchant's user id (not the caller's)"`
	MaxAmount      bind.Amount `json:"maxAmount" required:"true" description:"integer minor units (1 to 10^15) the merchant may charge in total"`
}

// createAuthorization lets a wallet owner authorize a merchant (named by
// one of its key ids, or its user id) to charge the wallet up to maxAmount
// in total. A new authorization replaces the previous one of that merchant
// on that wallet.
func (h *Handlers) createAuthorization(c *fiber.Ctx, req *createAuthorizationRequest) error {
	wid, keyID, merchant := clean(req.WalletID), clean(req.MerchantKeyID), clean(req.MerchantUserID)
	var v bind.Validator // the fields' presence and lengths are bound by their tags
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
	return c.Status(http.StatusCreated).JSON(toAuthorization(a))
}

func (h *Handlers) listAuthorizations(c *fiber.Ctx, _ *server.NoRequest) error {
	p, _ := auth.User(c)
	as, err := h.commerce.AuthorizationsOf(c.UserContext(), p.UserID)
	if err != nil {
		return err
	}
	return c.JSON(itemsOf(as, toAuthorization))
}

func (h *Handlers) revokeAuthorization(c *fiber.Ctx, req *authorizationPath) error {
	p, _ := auth.User(c)
	a, err := h.commerce.RevokeAuthorization(c.UserContext(), p.UserID, clean(req.ID), h.now().UTC())
	if err != nil {
		if isNotFound(err) {
			return apierr.NotFound("no such authorization")
		}
		return err
	}
	return c.JSON(toAuthorization(a))
}

// merchantKey authenticates X-API-Key: missing, malformed, unknown and
// revoked keys are all 401 key_invalid.
func (h *Handlers) merchantKey(c *fiber.Ctx) (store.MerchantKey, error) {
	k, err := h.merchantKeys.Find(c.UserContext(), strings.TrimSpace(c.Get(HeaderAPIKey)))
	if errors.Is(err, auth.ErrKeyUnknown) {
		return store.MerchantKey{}, apierr.KeyInvalid()
	}
	if err != nil {
		return store.MerchantKey{}, err
	}
	if k.Status != "active" {
		return store.MerchantKey{}, apierr.KeyInvalid()
	}
	return k, nil
}

// merchantKeyLocal holds the merchant key requireMerchantKey authenticated.
const merchantKeyLocal = "fiat.merchantKey"

// requireMerchantKey authenticates X-API-Key before anything of the request
// is read (401 key_invalid) and keeps the key for the handler.
func (h *Handlers) requireMerchantKey(c *fiber.Ctx) error {
	k, err := h.merchantKey(c)
	if err != nil {
		return err
	}
	c.Locals(merchantKeyLocal, k)
	return c.Next()
}

// callerKey is the merchant key requireMerchantKey authenticated.
func callerKey(c *fiber.Ctx) store.MerchantKey {
	k, _ := c.Locals(merchantKeyLocal).(store.MerchantKey)
	return k
}

type chargeRequest struct {
	APIKey      string      `header:"X-API-Key" json:"-" required:"true" pattern:"^mk_live_[0-9a-f]{32}$" description:"the merchant's API key"`
	WalletID    string      `json:"walletId" required:"true" maxLength:"200" description:"the customer's wallet, which authorized this merchant"`
	Amount      bind.Amount `json:"amount" description:"integer minor units (1 to 10^15); amount or amountKzt is required"`
	AmountKzt   bind.Amount `json:"amountKzt" description:"the same as amount: send one (both with different values is refused)"`
	PaymentRef  string      `json:"paymentRef" required:"true" maxLength:"200" description:"the merchant's reference: a replay of it answers the first charge"`
	Description string      `json:"description" maxLength:"500"`
}

// charge charges a customer wallet the merchant is authorized on. The
// command id is derived from (merchant, paymentRef), so a replay is
// answered from the stored result; a settled charge is also found by the
// unique (merchant, paymentRef) after the 24 h idempotency window.
func (h *Handlers) charge(c *fiber.Ctx, req *chargeRequest) error {
	k := callerKey(c)
	ref, desc := clean(req.PaymentRef), strings.Clone(req.Description)
	var v bind.Validator
	wid, amount := validateWalletAmount(&v, req.WalletID, req.Amount, req.AmountKzt)
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
		c.Set(server.HeaderIdempotentReplayed, "true")
		return c.Status(http.StatusOK).JSON(store.ChargeResultOf(prev, true))
	case !isNotFound(err):
		return err
	}
	cust, err := h.wallets.Wallet(ctx, wid)
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
	merchantWallet, err := h.wallets.EnsureWallet(ctx, k.UserID, cust.Currency, schemas.NewID(), h.now().UTC())
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
	var body schemas.FiatChargeResult
	if err := json.Unmarshal(rep.Body, &body); err != nil {
		return rep
	}
	body.Idempotent = true
	b, err := json.Marshal(body)
	if err != nil {
		return rep
	}
	rep.Status, rep.Body = http.StatusOK, b
	return rep
}
