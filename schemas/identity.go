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
