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
