package mask

import (
	"regexp"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/commands"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// DefaultCurrency is the currency of a mask created without one.
const DefaultCurrency = "USD"

// DefaultLifetime is how long a mask created without expiresAt lives.
const DefaultLifetime = 365 * 24 * time.Hour

var currencyCode = regexp.MustCompile(`^[A-Z]{3}$`)

type createMaskRequest struct {
	Label            string      `json:"label" maxLength:"200"`
	Kind             string      `json:"kind" required:"true" enum:"single-use,recurring,merchant-locked,category-locked"`
	LockedToMerchant string      `json:"lockedToMerchant" maxLength:"200" description:"required for merchant-locked masks"`
	LockedToCategory string      `json:"lockedToCategory" maxLength:"200" description:"required for category-locked masks"`
	Currency         string      `json:"currency" pattern:"^[A-Za-z]{3}$" description:"ISO 4217 code; USD when left out"`
	SpendLimitCents  bind.Amount `json:"spendLimitCents" required:"true"`
	ExpiresAt        string      `json:"expiresAt" format:"date-time" description:"in the future; a year from now when left out"`
}

// validate checks the request and returns the command data (without ids).
func (req createMaskRequest) validate(now time.Time) (schemas.MaskIssue, error) {
	var v bind.Validator
	d := schemas.MaskIssue{
		Label:            strings.TrimSpace(req.Label),
		Kind:             strings.TrimSpace(req.Kind),
		LockedToMerchant: strings.TrimSpace(req.LockedToMerchant),
		LockedToCategory: strings.TrimSpace(req.LockedToCategory),
		Currency:         strings.ToUpper(strings.TrimSpace(req.Currency)),
	}
	// label, kind and the locks' lengths are bound by their tags; what is
	// left is what depends on the kind.
	switch {
	case d.Kind == schemas.MaskKindMerchantLocked:
		v.Required("lockedToMerchant", d.LockedToMerchant)
	case d.LockedToMerchant != "":
		v.Fail("lockedToMerchant", "applies only to merchant-locked masks")
	}
	switch {
	case d.Kind == schemas.MaskKindCategoryLocked:
		v.Required("lockedToCategory", d.LockedToCategory)
	case d.LockedToCategory != "":
		v.Fail("lockedToCategory", "applies only to category-locked masks")
	}
	if d.Currency == "" {
		d.Currency = DefaultCurrency
	}
	v.Check(currencyCode.MatchString(d.Currency), "currency", "must be a 3-letter ISO 4217 code such as USD")
	d.SpendLimitCents = v.Amount("spendLimitCents", req.SpendLimitCents)
	d.ExpiresAt = now.Add(DefaultLifetime)
	if s := strings.TrimSpace(req.ExpiresAt); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		switch {
		case err != nil:
			v.Fail("expiresAt", "must be an ISO 8601 timestamp such as 2030-01-02T15:04:05Z")
		case !t.After(now):
			v.Fail("expiresAt", "must be in the future")
		default:
			d.ExpiresAt = t.UTC()
		}
	}
	return d, v.Err()
}

// createMask issues a mask: the id is assigned here so that it can be the
// command's partition key; the consumer draws the virtual PAN and answers
// 201 with the mask. An Idempotency-Key makes retries safe.
func (h *Handlers) createMask(c *fiber.Ctx, req *createMaskRequest) error {
	now := h.now().UTC()
	d, err := req.validate(now)
	if err != nil {
		return err
	}
	user := caller(c)
	d.MaskID, d.UserID = schemas.NewID(), user
	env, err := schemas.New(schemas.TypeMaskIssue, d.MaskID, user, d, now)
	if err != nil {
		return err
	}
	return commands.Exchange(c, h.sender, topics.MaskCommands, env, commands.RequestIdempotency(c, user, "POST "+Prefix+"/masks"))
}
