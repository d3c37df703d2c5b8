package schemas

// Identity event types.
const (
	TypeUserRegistered = "user.registered"
)

var identityVersions = map[string]int{TypeUserRegistered: 1}

// UserRegistered is emitted to events.identity when an account is created.
type UserRegistered struct {
	UserID string `json:"userId"`
	Email  string `json:"email"`
	Name   string `json:"name,omitempty"`
}

// AuthUser names the account a token was issued to.
type AuthUser struct {
	ID    string `json:"id" required:"true" format:"ksuid"`
	Email string `json:"email" required:"true"`
}

// AuthToken is the answer of register and login: a bearer token (an HS256
// JWT sent as `Authorization: Bearer <token>`) and its account.
type AuthToken struct {
	Token string   `json:"token" required:"true" description:"HS256 JWT, sent as Authorization: Bearer <token>"`
	User  AuthUser `json:"user" required:"true"`
}

// Identity roles as GET /api/auth/me reports them: admin only for a verified
// e-mail on an admin allowlist.
const (
	RoleUser  = "user"
	RoleAdmin = "admin"
)

// Profile is the caller's profile and role (GET /api/auth/me).
type Profile struct {
	ID    string `json:"id" required:"true" format:"ksuid"`
	Email string `json:"email" required:"true"`
	Name  string `json:"name" required:"true"`
	Role  string `json:"role" required:"true" enum:"user,admin"`
	// MFAEnabled is a confirmed TOTP enrolment.
	MFAEnabled bool `json:"mfaEnabled" required:"true" description:"TOTP two-factor is on"`
}

// VerificationSent answers POST /api/auth/verify-email: a one-time link was
// mailed to the caller's address and works until ExpiresAt.
type VerificationSent struct {
	Sent      bool   `json:"sent" required:"true"`
	Email     string `json:"email" required:"true"`
	ExpiresAt string `json:"expiresAt" required:"true" format:"date-time"`
}

// EmailVerified answers GET /api/auth/verify-email: the address is verified.
type EmailVerified struct {
	Verified bool   `json:"verified" required:"true"`
	Email    string `json:"email" required:"true"`
}

// AuthSession is one live login session (GET /api/auth/sessions).
type AuthSession struct {
	ID         string `json:"id" required:"true" format:"ksuid"`
	CreatedAt  string `json:"createdAt" required:"true" format:"date-time"`
	LastSeenAt string `json:"lastSeenAt" required:"true" format:"date-time" description:"updated at most once a minute"`
	IP         string `json:"ip" required:"true" description:"the client address of the login"`
	UserAgent  string `json:"userAgent" required:"true" description:"the User-Agent of the login (at most 512 bytes)"`
	Current    bool   `json:"current" required:"true" description:"true for the session of the token that asked"`
}

// AuthSessions answers GET /api/auth/sessions.
type AuthSessions struct {
	Items []AuthSession `json:"items" required:"true"`
}

// PasswordResetRequested answers POST /api/auth/password/forgot, the same
// for a known and an unknown address.
type PasswordResetRequested struct {
	Accepted bool   `json:"accepted" required:"true"`
	Message  string `json:"message" required:"true"`
}

// TOTPEnrolment answers POST /api/auth/mfa/totp: the pending secret, to be
// confirmed with a first code.
type TOTPEnrolment struct {
	Secret     string `json:"secret" required:"true" description:"base32 TOTP secret (RFC 6238, SHA-1, 6 digits, 30 s)"`
	OtpauthURL string `json:"otpauthUrl" required:"true" description:"otpauth://totp/ URI for authenticator apps (QR code content)"`
}

// RecoveryCodes answers POST /api/auth/mfa/totp/confirm: ten single-use
// codes, shown once (only their hashes are kept).
type RecoveryCodes struct {
	RecoveryCodes []string `json:"recoveryCodes" required:"true" minItems:"10" maxItems:"10"`
}
