package server

import (
	"fmt"
	"net/http"
	"reflect"
	"sync"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/ratelimit"
)

// Op is the typed declaration of one operation: the Go type of its request
// (Req: path, query and header parameters by `path:`, `query:` and `header:`
// tags, the JSON body by `json:` tags), the answers it gives per status as
// Go values, whether it needs a bearer token, its rate-limit class and the
// error codes it can return. The request is bound and validated from Req
// before Handle runs, and the OpenAPI operation is reflected from the same
// declaration (gateway/openapi), so the document cannot drift from the code.
type Op[Req any] struct {
	// Summary is the operation's one line.
	Summary string
	// Description says who may call the operation (anyone, a user's bearer
	// token, an admin role, a partner key or signature) and what it changes;
	// the documents show it under the summary.
	Description string
	// Caller, when set, says who may call in place of what Public, APIKey
	// and Role imply (a signed partner callback, a service key).
	Caller string
	// Class is the rate-limit class of a write; reads are always Read,
	// except reads of the keyed partner class (Partner), which keep it.
	Class ratelimit.Class
	// Public marks an operation that needs no bearer token.
	Public bool
	// APIKey names the header whose key authenticates the operation
	// instead of a bearer token (a partner key, e.g. X-Build-Key); the
	// middleware that checks it is passed to Handle.
	APIKey string
	// KeyScope is the scope a restricted API key needs on this route,
	// declared with it: a scope of schemas.KeyScopes, or NoKeys to close the
	// route to keys. Empty takes the scope of its router's area
	// (Router.KeyArea: read for GET and HEAD, write otherwise); a public,
	// partner-key or admin route is closed to keys whatever it says.
	KeyScope string
	// Role names who may call beyond a valid token, e.g. "fiat admin"; the
	// middleware that enforces it is passed to Handle with the
	// authentication. The document states it and the 403 forbidden answer.
	Role string
	// Responses are the answers, by status. Errors every operation can give
	// (400, 401, 404 for a path with parameters, 422, 429, 500, 503) are
	// added to the document by gateway/openapi.
	Responses []Response
	// Handle runs with the bound, validated request.
	Handle func(c *fiber.Ctx, req *Req) error
}

// Response is one declared answer. Body is a value of the Go type the
// handler encodes (nil for an answer without a JSON body); an error answer
// is built with Fails.
type Response struct {
	Status      int
	Description string
	Body        any
	// ContentType is the media type of a body that is not JSON (a page, a
	// feed); Body is then nil.
	ContentType string
	// Error marks an answer with the Error shape; Description starts with
	// its codes ("not_found: …", "a or b: …").
	Error bool
}

// Answers is a success answer with the Go value its body is encoded from.
func Answers(status int, description string, body any) Response {
	return Response{Status: status, Description: description, Body: body}
}

// Fails is an error answer: description starts with the codes it carries,
// e.g. "not_found: no such mask of the caller".
func Fails(status int, description string) Response {
	return Response{Status: status, Description: description, Error: true}
}

// Declaration is what the document generator reads of a typed route.
type Declaration struct {
	// Request is a pointer to a zero request value (nil: no parameters and
	// no body).
	Request     any
	Responses   []Response
	Public      bool
	APIKey      string
	KeyScope    string
	Role        string
	Description string
	Caller      string

	memoOnce sync.Once
	memo     any
}

// Memo returns what build returns, computed once per declaration: the
// document generator keeps its reflection of the operation here, since a
// declaration never changes after registration.
func (d *Declaration) Memo(build func() any) any {
	d.memoOnce.Do(func() { d.memo = build() })
	return d.memo
}

// NoRequest is the request type of an operation without parameters or body.
type NoRequest struct{}

// Validator is a request that checks itself after binding; its error is
// returned as is (a validation_failed answer from bind.Validator).
type Validator interface{ Validate() error }

// Get registers a typed read.
func Get[Req any](r Router, path string, op Op[Req], mw ...fiber.Handler) {
	Handle(r, http.MethodGet, path, op, mw...)
}

// Post registers a typed write.
func Post[Req any](r Router, path string, op Op[Req], mw ...fiber.Handler) {
	Handle(r, http.MethodPost, path, op, mw...)
}

// Handle registers a typed operation: mw run first (authentication), then
// the request is bound (bind.Request) and validated, then op.Handle.
func Handle[Req any](r Router, method, path string, op Op[Req], mw ...fiber.Handler) {
	class := op.Class
	if (method == http.MethodGet || method == http.MethodHead) && class != ratelimit.Partner {
		class = ratelimit.Read
	}
	var request any
	if _, none := any(new(Req)).(*NoRequest); !none {
		request = new(Req)
	}
	decl := &Declaration{Request: request, Responses: op.Responses, Public: op.Public, APIKey: op.APIKey, KeyScope: op.KeyScope, Role: op.Role,
		Description: op.Description, Caller: op.Caller}
	binder, err := bind.For(reflect.TypeFor[Req]())
	if err != nil {
		panic(fmt.Sprintf("%s %s: %v", method, path, err)) // a declaration error, found at start-up
	}
	handle := op.Handle
	hs := append(append([]fiber.Handler(nil), mw...), func(c *fiber.Ctx) error {
		var req Req
		if err := binder.Bind(c, &req); err != nil {
			return err
		}
		// The declared bounds first, then the type's own checks (the rules
		// its tags cannot say); one answer names the fields of both.
		err := binder.Check(c, &req)
		if v, ok := any(&req).(Validator); ok {
			err = bind.Merge(err, v.Validate())
		}
		if err != nil {
			return err
		}
		return handle(c, &req)
	})
	r.handle(method, path, class, op.Summary, decl, hs...)
}
