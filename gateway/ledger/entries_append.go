package ledger

import (
	"errors"
	"net/http"
	"regexp"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/commands"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/ledger"
	"github.com/fintech/platform/topics"
)

// appendRequest is the body of POST /entries.
type appendRequest struct {
	Kind        string         `json:"kind" required:"true" minLength:"1" maxLength:"64" description:"a kind of the caller's own; module namespaces (fiat:, mask:, gov:, …) are refused"`
	SourceID    string         `json:"sourceId" required:"true" minLength:"1" maxLength:"256"`
	AmountCents bind.Amount    `json:"amountCents"`
	Currency    string         `json:"currency" pattern:"^[A-Z]{3,8}$"`
	Meta        map[string]any `json:"meta" description:"at most 64 KiB of JSON"`
}

var currencyRE = regexp.MustCompile(`^[A-Z]{3,8}$`)

func noNUL(v *bind.Validator, field, s string) {
	v.Check(!strings.ContainsRune(s, 0), field, "must not contain NUL characters")
}

// Validate checks what only the request has (the amount as sent, the meta
// object's size) and the entry's own rule (schemas.LedgerAppend.Validate),
// reporting every field at once.
func (req *appendRequest) Validate() error {
	var v bind.Validator
	if req.AmountCents.Set {
		v.Amount("amountCents", req.AmountCents)
	}
	if req.Meta != nil {
		if b, err := store.Canonical(req.Meta); err != nil || len(b) > schemas.LedgerMaxMeta {
			v.Fail("meta", "must be a JSON object of at most 64 KiB")
		}
	}
	var problems schemas.FieldProblems
	if errors.As(req.entry("").Validate(), &problems) {
		for field, reason := range problems {
			v.Fail(field, reason)
		}
	}
	return v.Err()
}

// entry is the entry the request asks actor to chain.
func (req *appendRequest) entry(actor string) schemas.LedgerAppend {
	var amount *int64
	if req.AmountCents.Set {
		amount = &req.AmountCents.Value
	}
	return schemas.LedgerAppend{Kind: req.Kind, SourceID: req.SourceID, ActorUserID: actor, AmountCents: amount,
		Currency: req.Currency, Meta: req.Meta, Scope: actor}
}

// append queues the entry for the one appender and answers its reply.
func (h *Handlers) append(c *fiber.Ctx, req *appendRequest) error {
	if schemas.IsModuleKind(req.Kind) {
		return apierr.New(http.StatusForbidden, apierr.CodeForbidden,
			"kind "+req.Kind+" is emitted by a platform module and cannot be posted")
	}
	p, _ := auth.User(c)
	env, err := schemas.New(schemas.TypeLedgerAppend, "", p.UserID, req.entry(p.UserID), h.now())
	if err != nil {
		return err
	}
	return commands.Exchange(c, h.bus, topics.LedgerAppend, env,
		commands.RequestIdempotency(c, p.UserID, "POST "+Prefix+"/entries"))
}
