package server

import (
	"context"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// A request's trace starts here: the W3C traceparent the caller sent (or a
// new trace) with a server span around the handler, answered back in the
// response's traceparent header so that a client, a log line and the
// console name the same trace. The span is made with the OpenTelemetry API
// rather than otelfiber's middleware, which records the full URL with its
// query (where verification and reset tokens travel), the user agent and
// an X-Forwarded-For address nobody checked, and copies every header of
// every request, sampled or not.

var traceContext propagation.TraceContext

// startSpan starts the request's server span.
func (s *Server) startSpan(c *fiber.Ctx) (context.Context, trace.Span) {
	ctx := traceContext.Extract(c.UserContext(), requestCarrier{c})
	ctx, span := s.tracer.Start(ctx, "HTTP "+c.Method(), trace.WithSpanKind(trace.SpanKindServer))
	traceContext.Inject(ctx, responseCarrier{c})
	return ctx, span
}

// endSpan names the span by its route (not its path, which holds ids) and
// records the answer.
func endSpan(span trace.Span, method, route string, status int) {
	if !span.IsRecording() {
		return
	}
	span.SetName(method + " " + route)
	span.SetAttributes(attribute.String("http.request.method", method), attribute.String("http.route", route),
		attribute.Int("http.response.status_code", status))
	if status >= http.StatusInternalServerError {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
}

// traceID is the span's trace id, "" when it is in none.
func traceID(span trace.Span) string {
	if sc := span.SpanContext(); sc.IsValid() {
		return sc.TraceID().String()
	}
	return ""
}

// requestCarrier reads the trace headers of a request.
type requestCarrier struct{ c *fiber.Ctx }

func (r requestCarrier) Get(key string) string { return string(r.c.Request().Header.Peek(key)) }
func (r requestCarrier) Set(string, string)    {}
func (r requestCarrier) Keys() []string        { return traceContext.Fields() }

// responseCarrier writes the trace headers of the response.
type responseCarrier struct{ c *fiber.Ctx }

func (r responseCarrier) Get(key string) string { return string(r.c.Response().Header.Peek(key)) }
func (r responseCarrier) Set(key, value string) { r.c.Set(key, value) }
func (r responseCarrier) Keys() []string        { return traceContext.Fields() }
