package identity

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/identity"
	"github.com/fintech/platform/storage/postgres"
)

// The limit on wrong second-factor codes per account (issue 45): the 6th
// attempt within MFAWindow after MFAMaxWrong wrong ones is refused with 429
// rate_limited and Retry-After, a right code included, from any address.
const (
	MFAWindow   = 15 * time.Minute
	MFAMaxWrong = 5
)

// AttemptStore counts second-factor attempts per account.
type AttemptStore interface {
	TakeMFAAttempt(ctx context.Context, userID string, now time.Time, window time.Duration, max int) (int64, error)
	ReturnMFAAttempt(ctx context.Context, id int64) error
}

// errTooManyCodes is an account that reached the limit.
func errTooManyCodes() *apierr.Error {
	return apierr.New(http.StatusTooManyRequests, schemas.CodeRateLimited,
		"too many wrong two-factor codes for this account: try again after the Retry-After seconds")
}

// countedCode runs check, a check of a second-factor code of userID, as one
// counted attempt: refused with 429 (and Retry-After) when the account is at
// the limit, and uncounted when the code was right.
func (h *Handlers) countedCode(c *fiber.Ctx, userID string, check func() (bool, error)) (bool, error) {
	ctx := c.UserContext()
	id, err := h.users.TakeMFAAttempt(ctx, userID, h.now().UTC(), MFAWindow, MFAMaxWrong)
	var locked *identity.MFALocked
	if errors.As(err, &locked) {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int(math.Ceil(locked.RetryAfter.Seconds()))))
		return false, errTooManyCodes()
	}
	if err != nil {
		return false, err
	}
	ok, err := check()
	if err != nil || !ok {
		return false, err
	}
	return true, h.users.ReturnMFAAttempt(ctx, id)
}

// confirmedTOTP returns the user's enrolment and whether two-factor is on.
func (h *Handlers) confirmedTOTP(ctx context.Context, userID string) (identity.TOTP, bool, error) {
	enr, err := h.users.TOTP(ctx, userID)
	if errors.Is(err, postgres.ErrNotFound) {
		return identity.TOTP{}, false, nil
	}
	if err != nil {
		return identity.TOTP{}, false, err
	}
	return enr, enr.Confirmed, nil
}

// useFactor spends a current TOTP code, or else an unused recovery code, of
// a confirmed enrolment.
func (h *Handlers) useFactor(ctx context.Context, enr identity.TOTP, userID, code, recovery string) (bool, error) {
	if code != "" {
		return h.useCode(ctx, enr, userID, code)
	}
	if recovery != "" {
		return h.users.UseRecoveryCode(ctx, userID, recoveryHash(userID, recovery), h.now().UTC())
	}
	return false, nil
}
