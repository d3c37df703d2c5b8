// Package server builds the fiber application every module registers on: the
// one error handler that maps errors to the spec's codes, request ids, the
// structured access log, Prometheus metrics, the body limit and a rate-limit
// class on every route.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/ksuid"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/clientip"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
)

// BodyLimit is the largest request body accepted (decisions.md).
const BodyLimit = 1 << 20

// HeaderRequestID carries the request id in both directions.
const HeaderRequestID = "X-Request-Id"

// Server is the HTTP front of the platform.
type Server struct {
	App     *fiber.App
	limiter *ratelimit.Limiter
	clients *clientip.Resolver
	log     *slog.Logger
	routes  *[]Route
	// keyScopes is the scope an API key needs, by "METHOD path" of each
	// route (keyscope.go); written while routes register, read after.
	keyScopes map[string]string
	// strictKeyScopes: see RequireKeyScopes.
	strictKeyScopes bool

	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	tracer   trace.Tracer
	// slow keeps the latest slow requests (nil: none; slow.go).
	slow *slowLog
}

// Option changes a server setting.
type Option func(*Server)

// WithTracer starts a server span for every request with tracer, in the
// trace of the request's traceparent header when it has one (default: no
// spans, and no trace unless the caller sent one).
func WithTracer(tracer trace.Tracer) Option { return func(s *Server) { s.tracer = tracer } }

// New builds the app with its cross-cutting middleware. reg receives the
// HTTP metrics.
func New(limiter *ratelimit.Limiter, reg prometheus.Registerer, log *slog.Logger, opts ...Option) *Server {
	s := &Server{limiter: limiter, clients: clientip.New(nil), log: log, routes: &[]Route{}, keyScopes: map[string]string{},
		tracer: noop.NewTracerProvider().Tracer("")}
	for _, o := range opts {
		o(s)
	}
	s.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "platform_http_requests_total", Help: "HTTP requests by route, method and status.",
	}, []string{"route", "method", "status"})
	s.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "platform_http_request_seconds", Help: "HTTP request latency by route and method.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 15),
	}, []string{"route", "method"})
	reg.MustRegister(s.requests, s.latency)

	s.App = fiber.New(fiber.Config{
		AppName:               "platform",
		BodyLimit:             BodyLimit,
		ErrorHandler:          s.handleError,
		DisableStartupMessage: true,
		ReadTimeout:           30 * time.Second,
		IdleTimeout:           120 * time.Second,
	})
	s.App.Use(func(c *fiber.Ctx) error { return s.clients.Handler()(c) })
	s.App.Use(s.observe)
	s.App.Use(recover.New(recover.Config{EnableStackTrace: true, StackTraceHandler: s.logPanic}))
	return s
}

// TrustProxies makes the server read the client address from
// X-Forwarded-For when the peer is in trusted (clientip). Call it while
// wiring, before the server takes requests.
func (s *Server) TrustProxies(trusted []netip.Prefix) { s.clients = clientip.New(trusted) }

// logPanic logs a handler's panic with its stack; the recover middleware
// then turns it into an error, answered 500 internal with the request id.
// One bad request never stops the process.
func (s *Server) logPanic(c *fiber.Ctx, e any) {
	s.log.ErrorContext(c.UserContext(), "handler panicked", "method", c.Method(), "path", c.Path(),
		"requestId", RequestID(c.UserContext()), "panic", fmt.Sprint(e), "stack", string(debug.Stack()))
}

// observe assigns the request id, puts it on the request context, and after
// the handler records metrics and the access log line.
func (s *Server) observe(c *fiber.Ctx) error {
	start := time.Now()
	id := c.Get(HeaderRequestID)
	if id == "" || len(id) > 128 {
		id = ksuid.New().String()
	} else {
		id = string([]byte(id)) // fiber reuses the header buffer
	}
	c.Set(HeaderRequestID, id)
	ctx, span := s.startSpan(c)
	defer span.End()
	c.SetUserContext(context.WithValue(ctx, requestIDKey{}, id))

	err := c.Next()
	if err != nil {
		if herr := s.handleError(c, err); herr != nil {
			s.log.Error("writing error response", "err", herr)
		}
	}
	status := c.Response().StatusCode()
	if status == http.StatusServiceUnavailable {
		s.unavailable(c)
	}
	// fiber's strings alias buffers it reuses; metric labels outlive the request.
	method := strings.Clone(c.Method())
	route := c.Route().Path
	if status == http.StatusNotFound && route == "/" {
		route = "unmatched"
	}
	elapsed := time.Since(start)
	endSpan(span, method, route, status)
	s.slow.note(SlowRequest{At: start, Method: method, Route: route, Status: status, Took: elapsed,
		TraceID: traceID(span), RequestID: id})
	s.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	s.latency.WithLabelValues(route, method).Observe(elapsed.Seconds())
	if s.log.Enabled(c.UserContext(), slog.LevelInfo) {
		s.log.LogAttrs(c.UserContext(), slog.LevelInfo, "http",
			slog.String("method", method), slog.String("path", c.Path()),
			slog.String("route", route), slog.Int("status", status),
			slog.Float64("ms", float64(elapsed.Microseconds())/1000),
			slog.String("ip", clientip.String(c)), slog.String("requestId", id))
	}
	return nil
}

// RetryAfterUnavailable is the Retry-After (seconds) of a 503 whose
// handler set none: the same as HAProxy's own 503 (deploy/haproxy/503.http,
// deploy/local/cluster.sh).
const RetryAfterUnavailable = "1"

// unavailable completes a 503, whoever wrote it (apierr.Unavailable, a
// health check, a module's own answer): it carries Retry-After, and a write
// gives back the rate-limit units it spent — its retry with the same
// Idempotency-Key (every write has one: assignIdempotencyKey) is the same
// command, charged when it is answered (ratelimit.Limiter.Refund).
func (s *Server) unavailable(c *fiber.Ctx) {
	if len(c.Response().Header.Peek(fiber.HeaderRetryAfter)) == 0 {
		c.Set(fiber.HeaderRetryAfter, RetryAfterUnavailable)
	}
	if m := c.Method(); m != http.MethodGet && m != http.MethodHead && s.limiter != nil {
		s.limiter.Refund(c)
	}
}

type requestIDKey struct{}

// RequestID returns the request id stored on a request context.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// handleError is the one place that maps errors to responses.
func (s *Server) handleError(c *fiber.Ctx, err error) error {
	var ae *apierr.Error
	var problems schemas.FieldProblems
	if errors.As(err, &problems) {
		// A command's own rule (schemas), checked before it is sent.
		ae = apierr.Validation(problems)
	}
	if ae == nil && !errors.As(err, &ae) {
		var fe *fiber.Error
		switch {
		case errors.As(err, &fe) && fe.Code == http.StatusNotFound:
			ae = apierr.NotFound("no such route: " + c.Method() + " " + c.Path())
		case errors.As(err, &fe) && fe.Code == http.StatusRequestEntityTooLarge:
			ae = apierr.PayloadTooLarge()
		case errors.As(err, &fe) && fe.Code == http.StatusMethodNotAllowed:
			// fiber has set Allow to the methods the path has.
			ae = apierr.New(http.StatusMethodNotAllowed, apierr.CodeMethodNotAllowed, fmt.Sprintf(
				"%s is not allowed on %s; allowed: %s", c.Method(), c.Path(), c.Response().Header.Peek(fiber.HeaderAllow)))
		case errors.As(err, &fe) && fe.Code < 500:
			ae = apierr.New(fe.Code, apierr.CodeInvalidJSON, fe.Message)
		case postgres.Unavailable(err):
			// Postgres is failing over or restarting: the request may be
			// retried, with the same Idempotency-Key for a write.
			s.log.WarnContext(c.UserContext(), "postgres unavailable", "method", c.Method(), "path", c.Path(),
				"requestId", RequestID(c.UserContext()), "err", err)
			ae = apierr.Unavailable()
		default:
			s.log.ErrorContext(c.UserContext(), "internal error", "method", c.Method(), "path", c.Path(),
				"requestId", RequestID(c.UserContext()), "err", err)
			ae = apierr.Internal().With(map[string]any{"requestId": RequestID(c.UserContext())})
		}
	}
	if ae.Cause != nil {
		s.log.WarnContext(c.UserContext(), "request failed on a dependency", "method", c.Method(), "path", c.Path(),
			"requestId", RequestID(c.UserContext()), "code", ae.Code, "err", ae.Cause)
	}
	if len(c.Response().Header.Peek("RateLimit-Limit")) == 0 && s.limiter != nil {
		// Answers refused before any route ran (an oversized body, say) are
		// charged to the read class, so every answer carries the headers.
		if lerr := s.limiter.Check(c, ratelimit.Read, clientip.Key(c)); lerr != nil && ae.Status != http.StatusTooManyRequests {
			var le *apierr.Error
			if errors.As(lerr, &le) {
				ae = le
			}
		}
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	return c.Status(ae.Status).Send(ae.Body())
}

// HeaderIdempotencyKey names the client's retry key.
const HeaderIdempotencyKey = "Idempotency-Key"

// HeaderIdempotentReplayed, "true" on an answer, says it is the stored
// answer of a write already done with the same Idempotency-Key, sent again
// byte for byte, not a second write.
const HeaderIdempotentReplayed = "Idempotent-Replayed"

// assignIdempotencyKey gives every write that came without an
// Idempotency-Key one of its own and returns it in the response (on a 503
// too), so a client that retries after a timeout with that key can never
// apply the write twice.
func assignIdempotencyKey(c *fiber.Ctx) error {
	if len(c.Request().Header.Peek(HeaderIdempotencyKey)) == 0 {
		key := "auto-" + ksuid.New().String()
		c.Request().Header.Set(HeaderIdempotencyKey, key)
		c.Set(HeaderIdempotencyKey, key)
	} else {
		c.Set(HeaderIdempotencyKey, string(c.Request().Header.Peek(HeaderIdempotencyKey)))
	}
	return c.Next()
}

// Route is one registered endpoint, for the OpenAPI slices and the docs.
type Route struct {
	Method  string
	Path    string
	Class   ratelimit.Class
	Summary string
	// Decl is the typed declaration of a route registered with Op (nil for
	// a route registered with plain handlers).
	Decl *Declaration
	// KeyScope is the scope a restricted API key needs ("" when keys
	// cannot call the route).
	KeyScope string
}

// Routes lists every registered endpoint.
func (s *Server) Routes() []Route { return *s.routes }

// Router registers endpoints under a prefix, each with its rate-limit class.
type Router struct {
	s      *Server
	fr     fiber.Router
	prefix string
	// area is the key area of the router's routes (KeyArea; "" none
	// declared), inherited by its groups.
	area string
}

// Root returns the router at the application root.
func (s *Server) Root() Router { return Router{s: s, fr: s.App} }

// Group returns a router under prefix, with optional middleware, in r's
// key area (KeyArea).
func (r Router) Group(prefix string, mw ...fiber.Handler) Router {
	return Router{s: r.s, fr: r.fr.Group(prefix, mw...), prefix: r.prefix + prefix, area: r.area}
}

// Handle registers handlers for method and path, charged to class.
func (r Router) Handle(method, path string, class ratelimit.Class, summary string, handlers ...fiber.Handler) {
	r.handle(method, path, class, summary, nil, handlers...)
}

func (r Router) handle(method, path string, class ratelimit.Class, summary string, decl *Declaration, handlers ...fiber.Handler) {
	hs := []fiber.Handler{r.s.limiter.Handler(class), bind.CheckText}
	if method != http.MethodGet && method != http.MethodHead {
		hs = append(hs, assignIdempotencyKey)
	}
	hs = append(hs, handlers...)
	r.fr.Add(method, path, hs...)
	scope := keyScope(method, r.prefix+path, r.area, decl, r.s.strictKeyScopes)
	r.s.keyScopes[method+" "+r.prefix+path] = scope
	*r.s.routes = append(*r.s.routes, Route{Method: method, Path: r.prefix + path, Class: class, Summary: summary, Decl: decl,
		KeyScope: scope})
}

// Get registers a read.
func (r Router) Get(path, summary string, handlers ...fiber.Handler) {
	r.Handle(http.MethodGet, path, ratelimit.Read, summary, handlers...)
}

// Post registers a write of the given class.
func (r Router) Post(path string, class ratelimit.Class, summary string, handlers ...fiber.Handler) {
	r.Handle(http.MethodPost, path, class, summary, handlers...)
}

// Finish installs the catch-all that answers unknown routes (charged to the
// read class): 404 not_found for an unknown path, 405 method_not_allowed
// with Allow for a known path asked with another method (fiber's router
// tells them apart once the stack is exhausted). Call it after every module
// registered.
func (s *Server) Finish() {
	s.App.Use(func(c *fiber.Ctx) error {
		if err := s.limiter.Check(c, ratelimit.Read, clientip.Key(c)); err != nil {
			return err
		}
		return c.Next()
	})
}
