package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/twmb/franz-go/pkg/kgo"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	cpipeline "github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/commands"
	"github.com/fintech/platform/gateway/identity"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/storage/clickhouse"
	identitystore "github.com/fintech/platform/storage/identity"
	pipelinestore "github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/storage/sealed"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/broker"
)

// runnable is a long-running part: a consumer group, the relay, a scheduler.
type runnable interface {
	Run(ctx context.Context) error
}

// module is what one module contributes: routes on the gateway, consumer
// groups by name, and background loops that run beside the consumers.
type module struct {
	routes     func(r server.Router) error
	groups     map[string]func() (runnable, error)
	background []func() (runnable, error)
}

// app holds the dependencies shared by the modules of one process. Gateway
// fields (bus, tokens, limiter, server) are set only in processes that serve
// HTTP; ClickHouse only where a part needs it.
type app struct {
	cfg      Config
	log      *slog.Logger
	now      func() time.Time
	reg      *prometheus.Registry
	pool     *pgxpool.Pool
	brokers  []string
	embedded *broker.Embedded
	metrics  *cpipeline.Metrics
	ch       driver.Conn
	// vault seals the personal and secret values kept at rest, signRing
	// users' signing keys (keys.go).
	vault, signRing *sealed.Keyring
	// acceptGap: the consumer groups skip records gone from their topics
	// (--accept-gap, audited; consumers/pipeline/position.go).
	acceptGap bool

	bus *commands.Bus
	// authn answers who is calling (login tokens and API keys).
	authn *auth.Authenticator
	guard *auth.Guard
	// accounts is the identity module's handlers, built once
	// (identityHandlers): other modules' sensitive writes re-authenticate
	// with them.
	accounts *identity.Handlers
	limiter  *ratelimit.Limiter
	// budgets is nil when ABUSE_BUDGETS=0.
	budgets *ratelimit.Budgets
	server  *server.Server
	// traces makes the spans of every part (tracing.go).
	traces *sdktrace.TracerProvider
	// closers run at close (clients opened for the metrics collectors).
	closers []func()
}

// moduleWirings lists every module of the platform, in mount order.
func (a *app) moduleWirings() []func() (module, error) {
	return []func() (module, error){
		a.platformModule,
		a.identityModule,
		a.relayModule,
		a.fiatModule,
		a.ledgerModule,
		a.reputationModule,
		a.maskModule,
		a.govModule,
		a.charityModule,
		a.tradeModule,
		a.signModule,
		a.sinkModule,
		a.webhooksModule,
		a.partnerModule,
		a.constitutionModule,
		a.buildModule,
		a.consoleModule,
	}
}

func (a *app) modules() ([]module, error) {
	var out []module
	for _, w := range a.moduleWirings() {
		m, err := w()
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

func newLogger(level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	return slog.New(traceLogHandler{slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{Level: l})})
}

// newApp connects Postgres and Kafka. With embedded set and no
// KAFKA_BROKERS it starts the in-process broker.
func newApp(ctx context.Context, cfg Config, embedded bool) (*app, error) {
	if err := cfg.loadSecrets(); err != nil {
		return nil, err
	}
	traces, err := newTracerProvider(ctx, cfg, strings.Join(os.Args[1:2], ""))
	if err != nil {
		return nil, err
	}
	a := &app{cfg: cfg, log: newLogger(cfg.LogLevel), now: time.Now, reg: prometheus.NewRegistry(), traces: traces}
	if w := publicURLMismatch(cfg); w != "" {
		a.log.Warn(w)
	}
	a.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	a.metrics = cpipeline.NewMetrics(a.reg)
	registerDataDirMetrics(a.reg, cfg.DataDir)

	pool, err := postgres.Connect(ctx, cfg.DatabaseURL, int32(cfg.DBMaxConns), postgres.WithTracer(a.poolTracer()))
	if err != nil {
		a.close()
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	a.pool = pool
	if embedded {
		// `platform run` migrates before it opens its keys (their salt
		// and fingerprints live in the database).
		if _, err := postgres.Migrate(ctx, pool); err != nil {
			a.close()
			return nil, fmt.Errorf("DATABASE_URL: %w", err)
		}
	}
	if err := a.openKeys(ctx); err != nil {
		a.close()
		return nil, err
	}

	a.brokers = cfg.KafkaBrokers
	if len(a.brokers) == 0 {
		if !embedded {
			a.close()
			return nil, errors.New("KAFKA_BROKERS: required for this command (only `platform run` embeds a broker)")
		}
		limitEmbedded(os.Getenv)
		fsyncs := newFsyncHistogram()
		e, err := broker.Start(cfg.DataDir, cfg.KafkaPort, broker.WithLogger(a.log.With("component", "embedded-kafka")),
			broker.WithFloor(func(ctx context.Context) (map[string]map[int32]int64, error) {
				return pipelinestore.PositionFloor(ctx, pool)
			}), broker.WithFsyncObserver(func(d time.Duration) { fsyncs.Observe(d.Seconds()) }))
		if err != nil {
			a.close()
			return nil, fmt.Errorf("KAFKA_EMBEDDED_PORT: %w", err)
		}
		a.embedded = e
		a.brokers = e.Addrs()
		a.reg.MustRegister(fsyncs, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "platform_broker_fsyncs_total", Help: "fsync calls of the embedded broker's group commit.",
		}, func() float64 { return float64(e.Fsyncs()) }))
		a.log.Info("embedded kafka broker started", "addr", strings.Join(a.brokers, ","), "dataDir", cfg.DataDir)
		fmt.Fprintf(os.Stderr, "embedded Kafka broker listening on %s (try: kcat -b %s -L)\n", a.brokers[0], a.brokers[0])
	}
	cl, err := topics.NewClient(a.brokers)
	if err != nil {
		a.close()
		return nil, fmt.Errorf("KAFKA_BROKERS: %w", err)
	}
	defer cl.Close()
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := topics.EnsureTopics(tctx, cl); err != nil {
		a.close()
		return nil, fmt.Errorf("KAFKA_BROKERS: %w", err)
	}
	return a, nil
}

// requireAdmin is the middleware, after the bearer-token check, that admits
// only the admins of one module's allowlist and answers 403 forbidden to the
// others. Modules take it as a constructor dependency so that how admin rights
// are decided stays in one place.
func (a *app) requireAdmin(list auth.Allowlist) fiber.Handler {
	return a.guard.Require(list)
}

// clickhouse connects ClickHouse on first use.
func (a *app) clickhouse(ctx context.Context) (driver.Conn, error) {
	if a.ch != nil {
		return a.ch, nil
	}
	conn, err := clickhouse.ConnectAs(ctx, a.cfg.ClickHouseAddr, "default", a.clickhouseCredentials())
	if err != nil {
		return nil, fmt.Errorf("CLICKHOUSE_ADDR: %w", err)
	}
	a.ch = conn
	return conn, nil
}

// clickhouseCredentials are CLICKHOUSE_USER and CLICKHOUSE_PASSWORD.
func (a *app) clickhouseCredentials() clickhouse.Credentials {
	return clickhouse.Credentials{User: a.cfg.ClickHouseUser, Password: a.cfg.ClickHousePassword}
}

// clickhouseLazy connects ClickHouse on a part's first use, as
// CLICKHOUSE_USER.
func (a *app) clickhouseLazy() *clickhouse.Lazy {
	return clickhouse.NewLazyAs(a.cfg.ClickHouseAddr, "default", a.clickhouseCredentials())
}

// startGateway builds the HTTP side: the authenticator, limiter, server and
// the bus.
func (a *app) startGateway(ctx context.Context) error {
	tokens, err := auth.NewTokens([]byte(a.cfg.JWTSecret), a.cfg.JWTTTL, a.now)
	if err != nil {
		return fmt.Errorf("JWT_SECRET: %w", err)
	}
	// Every bearer token must belong to a live login session (issue 35).
	sessions, err := auth.NewSessions(identitystore.NewUsers(a.pool), a.now)
	if err != nil {
		return err
	}
	guard, err := auth.NewGuard(identitystore.NewUsers(a.pool), a.cfg.Admins)
	if err != nil {
		return err
	}
	// In production an admin's routes answer only once they enrolled in
	// two-factor.
	guard.RequireAdminMFA(!a.cfg.development())
	a.guard = guard
	a.limiter = ratelimit.New(a.cfg.RateLimits, a.now)
	if a.cfg.AbuseBudgets {
		a.budgets = ratelimit.NewBudgets(a.pool, a.now)
		a.budgets.Log = a.log
	}
	a.server = server.New(a.limiter, a.reg, a.log, server.WithTracer(a.tracer("gateway")),
		server.WithSlowRequests(a.cfg.SlowRequest))
	a.server.TrustProxies(a.cfg.TrustedProxies)
	// The session check re-confirms the sessions in use in one statement
	// per interval, until the HTTP server has drained.
	sessions.Log = a.log
	refresh, stopRefresh := context.WithCancel(context.WithoutCancel(ctx))
	a.server.App.Hooks().OnShutdown(func() error { stopRefresh(); return nil })
	go func() { _ = sessions.Run(refresh) }()
	a.server.RequireKeyScopes()
	// Restricted API keys ride on the bearer-token middleware, limited to
	// the scope each route's declaration derives (issue 35).
	keys, err := auth.NewKeys(identitystore.NewAPIKeys(a.pool), a.server.KeyScope, a.now, a.log)
	if err != nil {
		return err
	}
	if a.authn, err = auth.New(tokens, sessions, keys); err != nil {
		return err
	}
	var commandAcks []kgo.Opt
	if a.embedded == nil {
		// A broker of its own (KAFKA_BROKERS): commands wait for every
		// in-sync replica (min.insync.replicas), as events do.
		commandAcks = append(commandAcks, kgo.RequiredAcks(kgo.AllISRAcks()))
	}
	bus, err := commands.NewBus(ctx, a.brokers, a.cfg.CommandTimeout, a.cfg.LatencyHops, a.log, append(commandAcks, a.kafkaTracing())...)
	if err != nil {
		return fmt.Errorf("KAFKA_BROKERS: %w", err)
	}
	a.bus = bus
	return a.registerGatewayOpsMetrics(a.cfg.BackupStanza)
}

// startMetrics serves Prometheus /metrics on its own listener (METRICS_ADDR,
// loopback by default) so that the public API port never exposes internals.
// METRICS_ADDR=off disables it. The returned function stops the listener.
func (a *app) startMetrics() (func(), error) {
	return serveMetrics(a.cfg.MetricsAddr, a.reg, a.log)
}

// serveMetrics serves reg's /metrics on addr ("off": nothing).
func serveMetrics(addr string, reg *prometheus.Registry, log *slog.Logger) (func(), error) {
	if addr == "off" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("METRICS_ADDR: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	log.Info("metrics listening", "addr", ln.Addr().String())
	return func() { _ = srv.Close() }, nil
}

func (a *app) close() {
	for _, c := range a.closers {
		c()
	}
	if a.bus != nil {
		a.bus.Close()
	}
	if a.ch != nil {
		_ = a.ch.Close()
	}
	if a.pool != nil {
		a.pool.Close()
	}
	if a.embedded != nil {
		a.embedded.Close()
	}
	a.shutdownTracing()
}

// groupNames lists the consumer groups `platform consume` accepts: the
// groups of the registered modules. A wiring only builds closures until a
// part is started, so the modules of a bare app (the default configuration,
// no Postgres, no Kafka) name them without connecting anything.
func groupNames() string {
	// The development defaults only name things here: nothing connects.
	cfg, err := LoadConfig(func(k string) string {
		if k == "PLATFORM_ENV" {
			return envDevelopment
		}
		return ""
	})
	if err != nil {
		return "(the modules could not be listed: " + err.Error() + ")"
	}
	a := &app{cfg: cfg, log: slog.New(slog.DiscardHandler), now: time.Now, reg: prometheus.NewRegistry()}
	mods, err := a.modules()
	if err != nil {
		return "(the modules could not be listed: " + err.Error() + ")"
	}
	return strings.Join(moduleGroups(mods), ", ")
}

// moduleGroups returns the sorted names of the consumer groups of mods.
func moduleGroups(mods []module) []string {
	var names []string
	for _, m := range mods {
		for name := range m.groups {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}
