package identity

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/clientip"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/identity"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/topics"
)

// registerRequest is the body of POST /register.
type registerRequest struct {
	Email    string `json:"email" required:"true" format:"email" maxLength:"254" description:"surrounding spaces are trimmed"`
	Password string `json:"password" required:"true" minLength:"8" maxLength:"128" description:"8 to 128 characters"`
	Name     string `json:"name" maxLength:"200"`
}

// Validate keeps the address without its surrounding spaces; the e-mail
// format, the password's 8 to 128 characters and the name's length are
// bound by the tags.
func (req *registerRequest) Validate() error {
	req.Email = strings.TrimSpace(req.Email)
	return nil
}

// register creates the account and its user.registered event in one
// transaction and answers 201 with a token.
func (h *Handlers) register(c *fiber.Ctx, req *registerRequest) error {
	hash, err := h.pw.Hash(c.UserContext(), req.Password)
	if err != nil {
		return hashError(c, err)
	}
	u := identity.User{ID: schemas.NewID(), Email: req.Email, Name: strings.TrimSpace(req.Name), PasswordHash: hash,
		CreatedAt: h.now().UTC(), RegisteredBy: identity.RegisteredBySelf, RegistrationIP: clientip.String(c)}
	row, err := RegisteredEvent(u)
	if err != nil {
		return err
	}
	if err := h.users.Create(c.UserContext(), u, row); err != nil {
		if errors.Is(err, postgres.ErrConflict) {
			return apierr.New(http.StatusConflict, schemas.CodeEmailTaken, "an account with this e-mail exists")
		}
		return err
	}
	return h.respondToken(c, http.StatusCreated, u)
}

// RegisteredEvent is the user.registered outbox row of a new account, for
// Users.Create: the same event whether the user registered or an operator
// created the account.
func RegisteredEvent(u identity.User) (pipeline.OutboxRow, error) {
	env, err := schemas.New(schemas.TypeUserRegistered, u.ID, u.ID,
		schemas.UserRegistered{UserID: u.ID, Email: u.Email, Name: u.Name}, u.CreatedAt)
	if err != nil {
		return pipeline.OutboxRow{}, err
	}
	return pipeline.EventRow(topics.EventsIdentity, env)
}
