package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kotel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"

	cpipeline "github.com/fintech/platform/consumers/pipeline"
)

// Tracing (issue 46): one trace per request, from the gateway's server span
// through the command's Kafka record, the applier's batch and its Postgres
// statements, the reply, and the events the relay publishes (their
// traceparent rides in the event log). Trace ids reach every log line
// written with the request's context (traceLogHandler). Spans are exported
// only with OTEL_EXPORTER_OTLP_ENDPOINT; without it the provider samples
// nothing, which still mints and propagates trace ids for the logs.

// newTracerProvider builds the process's tracer provider from cfg.
func newTracerProvider(ctx context.Context, cfg Config, command string) (*sdktrace.TracerProvider, error) {
	res := resource.NewSchemaless(semconv.ServiceName("platform"), semconv.ServiceVersion(release),
		semconv.ProcessCommand(command))
	if cfg.TraceEndpoint == "" {
		return sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSampler(sdktrace.NeverSample())), nil
	}
	u, err := url.Parse(cfg.TraceEndpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: %q is not an http(s) URL of an OTLP collector", cfg.TraceEndpoint)
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(strings.TrimRight(cfg.TraceEndpoint, "/")+"/v1/traces"))
	if err != nil {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithBatcher(exp),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(cfg.TraceRatio)))), nil
}

// tracer is the tracer of one part of the platform.
func (a *app) tracer(name string) trace.Tracer {
	return a.traces.Tracer("github.com/fintech/platform/" + name)
}

// kafkaTracing is the franz-go hooks that give each produced record a
// publish span under its context's and put that span in its traceparent.
func (a *app) kafkaTracing() kgo.Opt {
	k := kotel.NewKotel(kotel.WithTracer(kotel.NewTracer(kotel.TracerProvider(a.traces),
		kotel.TracerPropagator(propagation.TraceContext{}))))
	return kgo.WithHooks(k.Hooks()...)
}

// poolTracer is the pgx tracer that records each statement of a sampled
// trace as a span (it does nothing for the others); nil without export.
func (a *app) poolTracer() pgx.QueryTracer {
	if a.cfg.TraceEndpoint == "" {
		return nil
	}
	return otelpgx.NewTracer(otelpgx.WithTracerProvider(a.traces), otelpgx.WithDisableSQLStatementInAttributes())
}

// runner joins a consumer group with the settings every group shares: the
// brokers, --accept-gap and the tracer.
func (a *app) runner(cfg cpipeline.Config, h cpipeline.Handler) (*cpipeline.Runner, error) {
	cfg.Brokers, cfg.AcceptGap, cfg.Tracer = a.brokers, a.acceptGap, a.tracer("consumers/"+cfg.Group)
	return cpipeline.NewRunner(cfg, a.pool, h, a.metrics, a.log)
}

// shutdownTracing flushes the spans not exported yet, waiting at most 5 s.
func (a *app) shutdownTracing() {
	if a.traces == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = a.traces.Shutdown(ctx)
}

// traceLogHandler adds the traceId of the context's span to every record
// logged with a context that has one.
type traceLogHandler struct{ slog.Handler }

func (h traceLogHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("traceId", sc.TraceID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceLogHandler{h.Handler.WithAttrs(attrs)}
}

func (h traceLogHandler) WithGroup(name string) slog.Handler {
	return traceLogHandler{h.Handler.WithGroup(name)}
}
