package commands

import (
	"context"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
)

// Sender publishes a command and waits for its reply; *Bus is one. Modules
// declare the same one-method interface where they use it.
type Sender interface {
	Send(ctx context.Context, cmd Command) (schemas.Reply, error)
}

// MaxIdempotencyKey bounds the Idempotency-Key header where a module checks
// it (KeyOf).
const MaxIdempotencyKey = 255

// Idempotency says how a command's id is derived so that a retry is
// recognised by the pipeline and answered with the first outcome instead of
// being applied again.
type Idempotency struct {
	// Caller, Endpoint and Key derive the command id (IdempotentID). Key is
	// the client's Idempotency-Key or another reference the client chose
	// (a paymentRef, a processor event id). Without a Key the envelope's
	// fresh id stands and nothing is guarded.
	Caller, Endpoint, Key string
	// RequestHash goes with the command: the same Key with another hash is
	// answered 409 idempotency_key_reused. Empty leaves the Key alone to
	// name the request.
	RequestHash string
}

// CommandID is the id of the command idem names.
func (idem Idempotency) CommandID() string {
	return IdempotentID(idem.Caller, idem.Endpoint, idem.Key)
}

// RequestIdempotency is the idempotency of an HTTP write: the caller's
// Idempotency-Key on endpoint, guarded by the hash of the request body.
func RequestIdempotency(c *fiber.Ctx, caller, endpoint string) Idempotency {
	return Idempotency{Caller: caller, Endpoint: endpoint,
		Key: strings.Clone(c.Get(server.HeaderIdempotencyKey)), RequestHash: RequestHash(c.Body())}
}

// KeyOf returns the request's Idempotency-Key, refusing one longer than
// MaxIdempotencyKey with 422 validation_failed.
func KeyOf(c *fiber.Ctx) (string, error) {
	key := c.Get(server.HeaderIdempotencyKey)
	if len(key) > MaxIdempotencyKey {
		return "", apierr.Validation(map[string]string{server.HeaderIdempotencyKey: "must be at most 255 characters"})
	}
	return strings.Clone(key), nil
}

// Publish gives env the id of idem and its request hash, publishes it on
// topic and waits (bounded) for the consumer's reply.
func Publish(ctx context.Context, s Sender, topic string, env schemas.Envelope, idem Idempotency) (schemas.Reply, error) {
	if idem.Key != "" {
		env.ID = idem.CommandID()
		env.RequestHash = idem.RequestHash
	}
	return s.Send(ctx, Command{Topic: topic, Env: env})
}

// Exchange is the idempotent send of a handler: Publish on the request's
// context, then the reply written byte for byte (Respond).
func Exchange(c *fiber.Ctx, s Sender, topic string, env schemas.Envelope, idem Idempotency) error {
	rep, err := Publish(c.UserContext(), s, topic, env, idem)
	if err != nil {
		return err
	}
	return Respond(c, rep)
}
