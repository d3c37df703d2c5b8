package identity

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/identity"
	"github.com/fintech/platform/storage/postgres"
)

// TOTP parameters (RFC 6238): SHA-1, 6 digits, 30-second steps, and a code
// of the step before or after the current one accepted (clock drift).
const (
	totpPeriod  = 30
	totpSkew    = 1
	totpDigits  = otp.DigitsSix
	totpSecret  = 20 // bytes: 160 bits, RFC 4226's recommendation
	recoveryN   = 10
	recoveryLen = 10 // base32 characters: 50 bits each
)

var totpOpts = totp.ValidateOpts{Period: totpPeriod, Skew: totpSkew, Digits: totpDigits, Algorithm: otp.AlgorithmSHA1}

// codeRequest carries a TOTP code.
type codeRequest struct {
	Code string `json:"code" required:"true" minLength:"6" maxLength:"6" pattern:"^[0-9]{6}$" description:"the current 6-digit code of the authenticator app"`
}

// startRequest is the body of POST /mfa/totp: the caller's password.
type startRequest struct {
	Password string `json:"password" required:"true" minLength:"1" maxLength:"128" description:"the caller's current password: a stolen token alone cannot enrol"`
}

// disableRequest is the body of DELETE /mfa/totp: the password and a
// current code.
type disableRequest struct {
	Password string `json:"password" required:"true" minLength:"1" maxLength:"128" description:"the caller's current password"`
	Code     string `json:"code" required:"true" minLength:"6" maxLength:"32" description:"a current 6-digit TOTP code, or an unused recovery code"`
}

func (h *Handlers) registerMFA(g server.Router, require fiber.Handler) {
	server.Post(g, "/mfa/totp", server.Op[startRequest]{
		Summary:     "Start enrolling in TOTP two-factor",
		Description: "Checks the caller's `password`, then draws a TOTP secret (RFC 6238: SHA-1, 6 digits, 30 s) and answers it with its otpauth:// URI for an authenticator app. It stays pending, replacing any earlier pending one, until POST /api/auth/mfa/totp/confirm; the secret is sealed at rest.",
		Class:       ratelimit.Auth, Handle: h.startTOTP,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the pending secret", schemas.TOTPEnrolment{}),
			server.Fails(http.StatusForbidden, "invalid_credentials: the password is wrong"),
			server.Fails(http.StatusConflict, "invalid_state: two-factor is already on; disable it first"),
		},
	}, require)
	server.Post(g, "/mfa/totp/confirm", server.Op[codeRequest]{
		Summary:     "Turn TOTP two-factor on with a first code",
		Description: "Checks a current code of the pending secret and turns two-factor on; answers ten single-use recovery codes, shown this once (only their hashes are kept), and mails the owner a notice. From then on login needs `code` or `recoveryCode`.",
		Class:       ratelimit.Auth, Handle: h.confirmTOTP,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "two-factor is on; the recovery codes", schemas.RecoveryCodes{}),
			server.Fails(http.StatusBadRequest, "verification_invalid: the code is wrong or was used already"),
			server.Fails(http.StatusConflict, "invalid_state: no pending enrolment (start with POST /api/auth/mfa/totp), or two-factor is on already"),
		},
	}, require)
	server.Handle(g, http.MethodDelete, "/mfa/totp", server.Op[disableRequest]{
		Summary:     "Turn TOTP two-factor off",
		Description: "Checks the caller's `password` and a current `code` (or an unused recovery code), turns two-factor off, removing the secret and the recovery codes, and mails the owner a notice. Wrong codes count toward the account's limit of 5 per 15 minutes.",
		Class:       ratelimit.Auth, Handle: h.disableTOTP,
		Responses: []server.Response{
			{Status: http.StatusNoContent, Description: "two-factor is off"},
			server.Fails(http.StatusForbidden, "invalid_credentials: the password or the code is wrong or was used already"),
			server.Fails(http.StatusTooManyRequests, "rate_limited: 5 wrong codes within 15 minutes; Retry-After says when to try again"),
			server.Fails(http.StatusConflict, "invalid_state: two-factor is not on"),
		},
	}, require)
}

// totpAAD binds a sealed secret to its user: it cannot be moved to another
// row.
func totpAAD(userID string) string { return "user_totp:" + userID }

func (h *Handlers) startTOTP(c *fiber.Ctx, req *startRequest) error {
	p, _ := auth.User(c)
	u, err := h.users.ByID(c.UserContext(), p.UserID)
	if errors.Is(err, postgres.ErrNotFound) {
		return apierr.AuthRequired()
	}
	if err != nil {
		return err
	}
	ok, err := h.pw.Compare(c.UserContext(), req.Password, u.PasswordHash)
	if err != nil {
		return hashError(c, err)
	}
	if !ok {
		return errReauth()
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: h.cfg.Issuer, AccountName: u.Email, Period: totpPeriod,
		SecretSize: totpSecret, Digits: totpDigits, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		return err
	}
	sealed, err := h.cfg.Vault.SealText(key.Secret(), totpAAD(u.ID))
	if err != nil {
		return err
	}
	if err := h.users.StartTOTP(c.UserContext(), u.ID, sealed, h.now().UTC()); err != nil {
		if errors.Is(err, postgres.ErrConflict) {
			return apierr.New(http.StatusConflict, schemas.CodeInvalidState, "two-factor is already on; disable it first")
		}
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(schemas.TOTPEnrolment{Secret: key.Secret(), OtpauthURL: key.URL()})
}

// wrongCode is a TOTP code that does not verify or was used.
func wrongCode() error {
	return apierr.New(http.StatusBadRequest, schemas.CodeVerificationInvalid, "the code is wrong or was used already")
}

func (h *Handlers) confirmTOTP(c *fiber.Ctx, req *codeRequest) error {
	p, _ := auth.User(c)
	enr, err := h.users.TOTP(c.UserContext(), p.UserID)
	if errors.Is(err, postgres.ErrNotFound) || (err == nil && enr.Confirmed) {
		return apierr.New(http.StatusConflict, schemas.CodeInvalidState,
			"no pending enrolment: start with POST /api/auth/mfa/totp (or two-factor is on already)")
	}
	if err != nil {
		return err
	}
	// Not counted against the limit of wrong codes: the caller was just
	// given this pending secret, so guessing its codes gains nothing.
	step, ok, err := h.matchStep(enr, p.UserID, req.Code)
	if err != nil {
		return err
	}
	if !ok {
		return wrongCode()
	}
	codes, hashes, err := newRecoveryCodes(p.UserID)
	if err != nil {
		return err
	}
	if err := h.users.ConfirmTOTP(c.UserContext(), p.UserID, step, hashes, h.now().UTC()); err != nil {
		if errors.Is(err, postgres.ErrNotFound) {
			return wrongCode()
		}
		return err
	}
	h.Notify(c.UserContext(), p.UserID, "two-factor sign-in (TOTP) was turned on for your account")
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(schemas.RecoveryCodes{RecoveryCodes: codes})
}

func (h *Handlers) disableTOTP(c *fiber.Ctx, req *disableRequest) error {
	p, _ := auth.User(c)
	if _, on, err := h.confirmedTOTP(c.UserContext(), p.UserID); err != nil || !on {
		if err != nil {
			return err
		}
		return apierr.New(http.StatusConflict, schemas.CodeInvalidState, "two-factor is not on")
	}
	if err := h.Reauthenticate(c, p.UserID, req.Password, req.Code); err != nil {
		return err
	}
	if err := h.users.DisableTOTP(c.UserContext(), p.UserID); err != nil {
		return err
	}
	h.Notify(c.UserContext(), p.UserID, "two-factor sign-in (TOTP) was turned off for your account")
	return c.SendStatus(http.StatusNoContent)
}

// matchStep finds the 30-second step, within the skew of now, whose code is
// code; it does not spend it.
func (h *Handlers) matchStep(enr identity.TOTP, userID, code string) (int64, bool, error) {
	secret, err := h.cfg.Vault.OpenText(enr.SealedSecret, totpAAD(userID))
	if err != nil {
		return 0, false, err
	}
	if len(code) != int(totpDigits) {
		return 0, false, nil
	}
	now := h.now().Unix() / totpPeriod
	for d := int64(-totpSkew); d <= totpSkew; d++ {
		step := now + d
		want, err := totp.GenerateCodeCustom(secret, time.Unix(step*totpPeriod, 0), totpOpts)
		if err != nil {
			return 0, false, err
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return step, true, nil
		}
	}
	return 0, false, nil
}

// useCode accepts a TOTP code of a confirmed enrolment once: a code of a
// step not after the last accepted one is a replay and refused.
func (h *Handlers) useCode(ctx context.Context, enr identity.TOTP, userID, code string) (bool, error) {
	step, ok, err := h.matchStep(enr, userID, code)
	if err != nil || !ok {
		return false, err
	}
	return h.users.UseTOTPStep(ctx, userID, step)
}

// recoveryHash is how a recovery code is stored: the SHA-256 of the user id
// and the code without separators, in lower case.
func recoveryHash(userID, code string) string {
	norm := strings.ToLower(strings.NewReplacer("-", "", " ", "").Replace(code))
	sum := sha256.Sum256([]byte(userID + ":" + norm))
	return hex.EncodeToString(sum[:])
}

// newRecoveryCodes draws ten codes (xxxxx-xxxxx, base32 lower case) and
// their hashes.
func newRecoveryCodes(userID string) ([]string, []string, error) {
	enc := base32.StdEncoding.WithPadding(base32.NoPadding)
	codes := make([]string, 0, recoveryN)
	hashes := make([]string, 0, recoveryN)
	for range recoveryN {
		raw := make([]byte, 8)
		if _, err := rand.Read(raw); err != nil {
			return nil, nil, err
		}
		s := strings.ToLower(enc.EncodeToString(raw))[:recoveryLen]
		code := s[:5] + "-" + s[5:]
		codes = append(codes, code)
		hashes = append(hashes, recoveryHash(userID, code))
	}
	return codes, hashes, nil
}
