package main

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/clientip"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/topics"
)

// Config is the process configuration, read from the environment
// (architecture.md, "Configuration"). Every problem names its variable.
type Config struct {
	Addr           string        // PLATFORM_ADDR
	PublicBaseURL  string        // PUBLIC_BASE_URL
	DataDir        string        // DATA_DIR
	DatabaseURL    string        // DATABASE_URL
	ClickHouseAddr string        // CLICKHOUSE_ADDR
	ClickHouseDB   string        // CLICKHOUSE_DATABASE; empty = named after the Postgres database
	KafkaBrokers   []string      // KAFKA_BROKERS; empty starts the embedded broker
	KafkaPort      int           // KAFKA_EMBEDDED_PORT, the embedded broker's port
	JWTSecret      string        // JWT_SECRET
	JWTTTL         time.Duration // JWT_TTL
	Admins         auth.Admins   // *_ADMIN_EMAILS
	ReputationKey  string        // REPUTATION_SERVICE_KEY
	LedgerSalt     string        // LEDGER_SALT
	ProcessorHook  string        // PROCESSOR_WEBHOOK_SECRET
	ProcessorKey   string        // PROCESSOR_API_KEY
	SigningKey     string        // SIGNING_MASTER_KEY
	// DataKey encrypts KYC document numbers, bank accounts and webhook
	// secrets at rest (DATA_ENCRYPTION_KEY; "new,old" rotates).
	DataKey        string
	Partner        PartnerSecrets
	WebhookRetry   []time.Duration
	WebhookTimeout time.Duration
	WebhookPrivate bool
	RateLimits     ratelimit.Limits
	KYCAutoApprove bool
	LatencyHops    bool          // LATENCY_HOPS: answer Platform-Hops (gateway/commands.HeaderHops)
	LedgerAudit    time.Duration // LEDGER_AUDIT_INTERVAL
	CommandTimeout time.Duration // COMMAND_TIMEOUT: how long a request waits for its command's reply
	// StreamHeartbeat is STREAM_HEARTBEAT: the comment an open event stream
	// writes when idle, which keeps proxies from closing it and is how the
	// server notices a client gone (freeing its stream slot).
	StreamHeartbeat time.Duration
	DBMaxConns      int    // DB_MAX_CONNS
	LogLevel        string // LOG_LEVEL: debug, info, warn, error
	// Tracing: spans are exported over OTLP/HTTP to TraceEndpoint
	// (OTEL_EXPORTER_OTLP_ENDPOINT, the collector's base URL; empty: no
	// export, trace ids still propagate and reach the logs), sampling
	// TraceRatio of the traces started here (OTEL_TRACES_SAMPLER_ARG,
	// default 0.01) and every trace a caller sent sampled.
	TraceEndpoint string
	TraceRatio    float64
	// SlowRequest is SLOW_REQUEST_THRESHOLD (default 1s; 0 keeps none):
	// the console lists each gateway process's latest requests answered in
	// that long or more, with their trace ids, linked with TraceURL
	// (TRACE_URL_TEMPLATE, {traceId} standing for the id) to a tracing UI.
	SlowRequest time.Duration
	TraceURL    string
	// Environment is PLATFORM_ENV: "production" (the default) or
	// "development", the only mode with the conveniences that must never
	// face the internet (see development()).
	Environment string
	PprofAddr   string // PPROF_ADDR: serve net/http/pprof there (off when empty)
	// GCPercent is the garbage collector's target (GC_PERCENT, default 200:
	// a collection when the heap grows by twice the live heap, half the
	// collections of Go's 100 for a heap of tens of MB). GOGC, when set,
	// wins. MemoryLimit (MEMORY_LIMIT, bytes; 0 = none) is the soft limit
	// that makes the collector work harder near it; GOMEMLIMIT wins.
	GCPercent    int64
	MemoryLimit  int64
	ReconcileURL string // RECONCILE_ALERT_URL: where reconciliation drift alerts are posted
	ReconcileKey string // RECONCILE_ALERT_SECRET: HMAC key signing those alerts
	SMTPURL      string // SMTP_URL: smtp(s)://user:pass@host:port?from=…; empty writes mail to the log and DATA_DIR/mail
	MetricsAddr  string // METRICS_ADDR: the Prometheus /metrics listener, loopback by default
	// BackupStanza (PGBACKREST_STANZA, which pgBackRest itself also reads,
	// with PGBACKREST_CONFIG): when set, gateways export the newest backup's
	// time from `pgbackrest info` (the BackupMissing alert).
	BackupStanza string
	// ProcessedRetention is how long applied-command ids are kept
	// (PROCESSED_RETENTION); never shorter than the command topics' retention.
	ProcessedRetention time.Duration
	Caps               Caps
	BuildPlanLimit     int           // BUILD_PLAN_VACANCY_LIMIT: open vacancies per employer
	AIURL              string        // AI_API_URL: OpenAI-compatible base URL; empty = built-in advisor
	AIKey              string        // AI_API_KEY
	AIModel            string        // AI_MODEL
	AIMonthlyLimit     int64         // AI_MONTHLY_LIMIT: AI requests per user per calendar month
	AITimeout          time.Duration // AI_TIMEOUT: bound on one call to the AI endpoint

	// TrustedProxies are the peers whose X-Forwarded-For is believed
	// (TRUSTED_PROXIES: CIDRs or addresses, comma-separated; empty: none,
	// the TCP peer is the client). gateway/clientip reads it from the right.
	TrustedProxies []netip.Prefix

	// AbuseBudgets enforces the per-IP and global budgets of
	// schemas/budgets.go (ABUSE_BUDGETS, default 1; 0 turns them off).
	AbuseBudgets bool

	// AdminListsSet says whether any *_ADMIN_EMAILS is set: without one, a
	// command cannot know the roles the server confers.
	AdminListsSet bool

	// ClickHouseUser and ClickHousePassword are CLICKHOUSE_USER (default
	// "default", the local stack's passwordless user) and
	// CLICKHOUSE_PASSWORD (compose's ClickHouse has no passwordless user).
	ClickHouseUser, ClickHousePassword string
}

// PartnerSecrets authenticate the inbound partner webhooks (rights, chess,
// cert); an empty secret never matches.
type PartnerSecrets struct {
	HMAC                string // PARTNER_WEBHOOK_SECRET (shared; a rail without its own)
	Rights, Chess, Cert string // RIGHTS_SECRET, CHESS_SECRET, CERT_SECRET (legacy headers)
	RequireHMAC         bool   // WEBHOOK_REQUIRE_HMAC: 1 disables the legacy headers

	// RightsHMAC, ChessHMAC, CertHMAC: each partner's own HMAC key
	// (RIGHTS_WEBHOOK_SECRET, CHESS_WEBHOOK_SECRET, CERT_WEBHOOK_SECRET).
	RightsHMAC, ChessHMAC, CertHMAC string
}

// Caps are the pre-KYC limits of decisions.md, in minor units.
type Caps struct {
	PerTransfer  int64 // FIAT_CAP_PER_TRANSFER
	DailyDeposit int64 // FIAT_CAP_DAILY_DEPOSIT
	Monthly      int64 // FIAT_CAP_MONTHLY
}

// The two modes of PLATFORM_ENV.
const (
	envProduction  = "production"
	envDevelopment = "development"
)

// Local stack defaults (deploy/local/stack.sh), used only in development.
const (
	defaultDatabaseURL = "postgres://postgres@127.0.0.1:55432/platform?sslmode=disable"
	defaultClickHouse  = "127.0.0.1:19000"
	defaultKafkaPort   = 19092
)

type envReader struct {
	get  func(string) string
	errs []error
}

func (r *envReader) str(name, def string) string {
	if v := strings.TrimSpace(r.get(name)); v != "" {
		return v
	}
	return def
}

func (r *envReader) fail(name, format string, args ...any) {
	r.errs = append(r.errs, fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...)))
}

func (r *envReader) duration(name string, def time.Duration) time.Duration {
	s := r.str(name, "")
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		r.fail(name, "%q is not a positive duration such as 10s or 168h", s)
		return def
	}
	return d
}

func (r *envReader) integer(name string, def int64, min int64) int64 {
	s := r.str(name, "")
	if s == "" {
		return def
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < min {
		r.fail(name, "%q is not an integer >= %d", s, min)
		return def
	}
	return n
}

// durationOrOff is duration, where "0" turns the setting off.
func (r *envReader) durationOrOff(name string, def time.Duration) time.Duration {
	if r.str(name, "") == "0" {
		return 0
	}
	return r.duration(name, def)
}

// ratio reads a fraction between 0 and 1.
func (r *envReader) ratio(name string, def float64) float64 {
	s := r.str(name, "")
	if s == "" {
		return def
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1 {
		r.fail(name, "%q is not a fraction between 0 and 1", s)
		return def
	}
	return f
}

// prefixes reads a list of CIDRs or addresses (clientip.ParseTrusted).
func (r *envReader) prefixes(name string) []netip.Prefix {
	out, err := clientip.ParseTrusted(r.str(name, ""))
	if err != nil {
		r.fail(name, "%v", err)
	}
	return out
}

func (r *envReader) flag(name string) bool {
	switch s := r.str(name, "0"); s {
	case "0", "false":
		return false
	case "1", "true":
		return true
	default:
		r.fail(name, "%q must be 0 or 1", s)
		return false
	}
}

// LoadConfig reads the configuration; the error joins every problem, each
// naming its variable.
//
// The binary runs in production mode unless PLATFORM_ENV=development is set:
// the development conveniences (the local stack's addresses, secrets
// generated into DATA_DIR, the embedded test processor, mail written to the
// log, KYC auto-approval, webhooks to private addresses) exist only when
// asked for, so a deployment that forgot a setting refuses to start instead
// of running the money-minting test processor on the internet.
func LoadConfig(getenv func(string) string) (Config, error) {
	return loadConfig(getenv, nil)
}

// LoadConfigFor is LoadConfig for one subcommand: in production it
// requires only the settings that command uses (its needs in subcommands).
func LoadConfigFor(command string, getenv func(string) string) (Config, error) {
	return loadConfig(getenv, productionNeeds(command))
}

func loadConfig(getenv func(string) string, needs []string) (Config, error) {
	r := &envReader{get: getenv}
	env := r.str("PLATFORM_ENV", envProduction)
	if env != envProduction && env != envDevelopment {
		r.fail("PLATFORM_ENV", "%q must be production or development", env)
		env = envProduction
	}
	dev := env == envDevelopment
	// devDefault is def in development and empty (a required setting) in
	// production.
	devDefault := func(def string) string {
		if dev {
			return def
		}
		return ""
	}
	c := Config{
		Addr:           r.str("PLATFORM_ADDR", "127.0.0.1:8080"),
		PublicBaseURL:  strings.TrimRight(r.str("PUBLIC_BASE_URL", devDefault(publicURLOf(r.str("PLATFORM_ADDR", "127.0.0.1:8080")))), "/"),
		DataDir:        r.str("DATA_DIR", "./.data"),
		DatabaseURL:    r.str("DATABASE_URL", devDefault(defaultDatabaseURL)),
		ClickHouseAddr: r.str("CLICKHOUSE_ADDR", devDefault(defaultClickHouse)),
		ClickHouseDB:   r.str("CLICKHOUSE_DATABASE", ""),
		KafkaBrokers:   topics.ParseBrokers(r.str("KAFKA_BROKERS", "")),
		KafkaPort:      int(r.integer("KAFKA_EMBEDDED_PORT", defaultKafkaPort, 0)),
		JWTTTL:         r.duration("JWT_TTL", 168*time.Hour),
		Admins: auth.Admins{
			Fiat:       auth.ParseAllowlist(r.str("FIAT_ADMIN_EMAILS", "")),
			Gov:        auth.ParseAllowlist(r.str("GOV_ADMIN_EMAILS", "")),
			Charity:    auth.ParseAllowlist(r.str("CHARITY_ADMIN_EMAILS", "")),
			Reputation: auth.ParseAllowlist(r.str("REPUTATION_ADMIN_EMAILS", "")),
		},
		WebhookTimeout: r.duration("WEBHOOK_TIMEOUT", 10*time.Second),
		WebhookPrivate: r.flag("WEBHOOK_ALLOW_PRIVATE"),
		RateLimits: ratelimit.Limits{
			Read:    int(r.integer("RATE_LIMIT_READ", 240, 0)),
			Write:   int(r.integer("RATE_LIMIT_WRITE", 60, 0)),
			Auth:    int(r.integer("RATE_LIMIT_AUTH", 20, 0)),
			Money:   int(r.integer("RATE_LIMIT_MONEY", 30, 0)),
			Partner: int(r.integer("RATE_LIMIT_PARTNER", 60, 0)),
			// Per client IP beside the per-key budget: four keys' worth.
			PartnerIP: int(r.integer("RATE_LIMIT_PARTNER_IP", 240, 0)),
		},
		KYCAutoApprove:     r.flag("KYC_AUTO_APPROVE"),
		LatencyHops:        r.flag("LATENCY_HOPS"),
		AbuseBudgets:       r.integer("ABUSE_BUDGETS", 1, 0) != 0,
		TrustedProxies:     r.prefixes("TRUSTED_PROXIES"),
		LedgerAudit:        r.duration("LEDGER_AUDIT_INTERVAL", time.Hour),
		CommandTimeout:     r.duration("COMMAND_TIMEOUT", 5*time.Second),
		StreamHeartbeat:    r.duration("STREAM_HEARTBEAT", 15*time.Second),
		DBMaxConns:         int(r.integer("DB_MAX_CONNS", 40, 2)),
		LogLevel:           r.str("LOG_LEVEL", "info"),
		TraceEndpoint:      r.str("OTEL_EXPORTER_OTLP_ENDPOINT", ""),
		TraceRatio:         r.ratio("OTEL_TRACES_SAMPLER_ARG", 0.01),
		SlowRequest:        r.durationOrOff("SLOW_REQUEST_THRESHOLD", time.Second),
		TraceURL:           r.str("TRACE_URL_TEMPLATE", ""),
		Environment:        env,
		PprofAddr:          r.str("PPROF_ADDR", ""),
		GCPercent:          r.integer("GC_PERCENT", 200, -1),
		MemoryLimit:        r.integer("MEMORY_LIMIT", 0, 0),
		ReconcileURL:       r.str("RECONCILE_ALERT_URL", ""),
		SMTPURL:            r.str("SMTP_URL", ""),
		MetricsAddr:        r.str("METRICS_ADDR", "127.0.0.1:9464"),
		BackupStanza:       r.str("PGBACKREST_STANZA", ""),
		ProcessedRetention: r.duration("PROCESSED_RETENTION", topics.CommandRetention()),
		AIURL:              r.str("AI_API_URL", ""),
		AIModel:            r.str("AI_MODEL", ""),
		AIMonthlyLimit:     r.integer("AI_MONTHLY_LIMIT", 100, 0),
		AITimeout:          r.duration("AI_TIMEOUT", 20*time.Second),
		BuildPlanLimit:     int(r.integer("BUILD_PLAN_VACANCY_LIMIT", 5, 1)),
		Caps: Caps{
			PerTransfer:  r.integer("FIAT_CAP_PER_TRANSFER", 10_000_000, 1),
			DailyDeposit: r.integer("FIAT_CAP_DAILY_DEPOSIT", 50_000_000, 1),
			Monthly:      r.integer("FIAT_CAP_MONTHLY", 100_000_000, 1),
		},
	}
	c.WebhookRetry = r.schedule("WEBHOOK_RETRY_SCHEDULE", "0s,5m,30m,2h,8h")
	c.ClickHouseUser = r.str("CLICKHOUSE_USER", "default")
	c.Partner.RequireHMAC = r.flag("WEBHOOK_REQUIRE_HMAC")
	c.readSecrets(r) // secretTable
	if c.ReputationKey != "" && len(c.ReputationKey) < 32 {
		r.fail("REPUTATION_SERVICE_KEY", "must be at least 32 characters")
	}
	if c.JWTSecret != "" && len(c.JWTSecret) < 32 {
		r.fail("JWT_SECRET", "must be at least 32 characters")
	}
	if c.ReconcileURL != "" {
		if u, err := url.Parse(c.ReconcileURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			r.fail("RECONCILE_ALERT_URL", "%q is not an http(s) URL", c.ReconcileURL)
		}
		if len(c.ReconcileKey) < 16 {
			r.fail("RECONCILE_ALERT_SECRET", "must be at least 16 characters when RECONCILE_ALERT_URL is set (alerts are signed)")
		}
	}
	if c.ProcessedRetention < topics.CommandRetention() {
		r.fail("PROCESSED_RETENTION", "%s is shorter than the command topics' retention (%s): a consumer that lost its offsets would apply old commands again",
			c.ProcessedRetention, topics.CommandRetention())
	}
	for _, name := range []string{"FIAT_ADMIN_EMAILS", "GOV_ADMIN_EMAILS", "CHARITY_ADMIN_EMAILS", "REPUTATION_ADMIN_EMAILS"} {
		c.AdminListsSet = c.AdminListsSet || r.str(name, "") != ""
	}
	if !dev {
		c.requireForProduction(r, needs)
	}
	if c.AIURL != "" {
		if u, err := url.Parse(c.AIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			r.fail("AI_API_URL", "%q is not an http(s) URL such as https://api.openai.com/v1", c.AIURL)
		}
		if c.AIModel == "" {
			r.fail("AI_MODEL", "is required when AI_API_URL is set")
		}
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		r.fail("LOG_LEVEL", "%q must be debug, info, warn or error", c.LogLevel)
	}
	if c.TraceURL != "" && (!strings.HasPrefix(c.TraceURL, "http://") && !strings.HasPrefix(c.TraceURL, "https://") ||
		!strings.Contains(c.TraceURL, "{traceId}")) {
		// The console links it: never javascript: or another scheme.
		r.fail("TRACE_URL_TEMPLATE", "%q must be an http(s) URL with {traceId} where the trace id goes", c.TraceURL)
	}
	if c.PublicBaseURL != "" && !strings.HasPrefix(c.PublicBaseURL, "http://") && !strings.HasPrefix(c.PublicBaseURL, "https://") {
		r.fail("PUBLIC_BASE_URL", "%q must start with http:// or https://", c.PublicBaseURL)
	}
	if abs, err := filepath.Abs(c.DataDir); err == nil {
		c.DataDir = abs
	}
	return c, errors.Join(r.errs...)
}

// requireForProduction reports, one problem per setting, what production
// mode needs set and what it refuses; needs, when not nil, limits it to
// those settings (an operator command).
func (c Config) requireForProduction(r *envReader, needs []string) {
	const hint = " (PLATFORM_ENV is production unless set to development)"
	// The settings production needs besides the required secrets
	// (secretTable).
	required := []struct {
		name, value, why string
	}{
		{"DATABASE_URL", c.DatabaseURL, "the Postgres DSN"},
		{"CLICKHOUSE_ADDR", c.ClickHouseAddr, "the ClickHouse native address host:port"},
		{"PUBLIC_BASE_URL", c.PublicBaseURL, "the public base of pay, checkout and e-mailed links"},
		{"SMTP_URL", c.SMTPURL, "verification links are mailed, never written to the log, in production"},
	}
	for _, s := range secretTable {
		if s.required {
			required = append(required, struct{ name, value, why string }{s.name, *s.field(&c), s.why})
		}
	}
	for _, s := range required {
		if s.value == "" && (needs == nil || slices.Contains(needs, s.name)) {
			r.fail(s.name, "required in production: %s%s", s.why, hint)
		}
	}
	c.checkKeyFormats(r)
	if needs != nil {
		return
	}
	if c.KYCAutoApprove {
		r.fail("KYC_AUTO_APPROVE", "1 is refused in production: it lifts the pre-KYC caps without review%s", hint)
	}
	if c.WebhookPrivate {
		r.fail("WEBHOOK_ALLOW_PRIVATE", "1 is refused in production: it lets webhooks reach private and loopback addresses%s", hint)
	}
}

// development reports whether PLATFORM_ENV=development was set explicitly.
func (c Config) development() bool { return c.Environment == envDevelopment }

func (r *envReader) schedule(name, def string) []time.Duration {
	s := r.str(name, def)
	var out []time.Duration
	for _, part := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d < 0 {
			r.fail(name, "%q is not a comma-separated list of 5 durations", s)
			return nil
		}
		out = append(out, d)
	}
	if len(out) != 5 {
		r.fail(name, "%q must list exactly 5 delays (one per attempt)", s)
	}
	return out
}

// oneLine joins a config error into the single line main prints.
func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}

// lines splits a joined error into its problems, one per line.
func lines(err error) []string {
	return strings.Split(err.Error(), "\n")
}

// processorMode names the deposit processor: "test" is the embedded test
// processor (no PROCESSOR_API_KEY), "stripe" the real one.
func (c Config) processorMode() string {
	if c.ProcessorKey == "" {
		return "test"
	}
	return "stripe"
}
