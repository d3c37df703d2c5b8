// Package harness starts the real platform binary for end-to-end tests and
// gives them typed HTTP helpers that fail the test on transport errors.
//
// Backing services come from testcontainers (Kafka, Postgres, ClickHouse)
// when a Docker engine is reachable, and from the local stack (`make test`
// starts it) otherwise; each platform instance gets its own database, data
// directory and ports.
package harness

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/storage/clickhouse"
	"github.com/fintech/platform/storage/postgres/pgtest"
)

// TB is the part of testing.TB the harness needs; ProcessTB provides it for
// a platform shared by a whole test process.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
	TempDir() string
}

// Admin e-mails and keys every harness platform is configured with; register
// these addresses to act as an admin.
const (
	FiatAdminEmail       = "fiat-admin@example.com"
	GovAdminEmail        = "gov-admin@example.com"
	CharityAdminEmail    = "charity-admin@example.com"
	ReputationAdminEmail = "reputation-admin@example.com"
	ReputationServiceKey = "test-reputation-service-key-0123456789abcdef"
)

// Platform is one running `platform run` process.
type Platform struct {
	BaseURL     string
	DatabaseURL string
	DataDir     string
	KafkaAddr   string
	// MetricsAddr is the separate Prometheus listener (METRICS_ADDR).
	MetricsAddr string
	Env         []string

	t TB
	// bin is Options.Binary ("" means Binary()).
	bin string
	// args is the subcommand and its arguments ("run" when empty); ready
	// is the URL that answers 200 once the process is up (the API's
	// version when empty and the process serves HTTP; "-" waits for none).
	args   []string
	ready  string
	cmd    *exec.Cmd
	logBuf *lockedBuffer
	exited chan struct{}
	client *http.Client
	conf   conformance

	// confirmed holds the admin addresses `platform admin verify` made
	// admins on this platform.
	confirmedMu sync.Mutex
	confirmed   map[string]bool
}

// Options tune a platform instance.
type Options struct {
	// Env adds or overrides environment variables.
	Env map[string]string
	// Production starts the process with exactly what production mode
	// needs (database, ClickHouse, listeners, a processor key, SMTP_URL and
	// every secret) and nothing else: no PLATFORM_ENV, no development
	// setting, not even the test process's own environment. Env still
	// applies on top.
	Production bool
	// DatabaseURL is a database of the test's own, on a server it may crash
	// (e2e/faults_test.go); by default a fresh database on the shared one.
	DatabaseURL string
	// Binary is the platform binary to run instead of Binary()'s (the
	// bench's A/B pairing runs a binary built from another commit).
	Binary string
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Start launches `platform run` on a fresh database and data directory and
// waits until it answers. The process is stopped when the test ends.
func Start(t TB, opts Options) *Platform {
	t.Helper()
	back := backingFor(t)
	dbURL := opts.DatabaseURL
	if dbURL == "" {
		_, dbURL = pgtest.NewDB(t)
	}
	dropClickHouseDatabase(t, back.ClickHouseAddr, dbURL)
	dataDir := t.TempDir()
	httpPort := FreePort(t)
	p := &Platform{
		BaseURL:     fmt.Sprintf("http://127.0.0.1:%d", httpPort),
		DatabaseURL: dbURL,
		DataDir:     dataDir,
		MetricsAddr: fmt.Sprintf("127.0.0.1:%d", FreePort(t)),
		t:           t,
		bin:         opts.Binary,
		client:      &http.Client{Timeout: 30 * time.Second},
	}
	env := baseEnv(back, dbURL, dataDir, fmt.Sprintf("127.0.0.1:%d", httpPort), p.BaseURL, p.MetricsAddr)
	if opts.Production {
		env = productionEnv(t, back, dbURL, dataDir, fmt.Sprintf("127.0.0.1:%d", httpPort), p.BaseURL, p.MetricsAddr)
	}
	if back.KafkaBrokers == "" {
		port := FreePort(t)
		env["KAFKA_EMBEDDED_PORT"] = fmt.Sprint(port)
		p.KafkaAddr = fmt.Sprintf("127.0.0.1:%d", port)
	} else {
		p.KafkaAddr = back.KafkaBrokers
	}
	for k, v := range opts.Env {
		env[k] = v
	}
	p.Env = os.Environ()
	if opts.Production {
		p.Env = nil
	}
	for k, v := range env {
		p.Env = append(p.Env, k+"="+v)
	}
	p.launch()
	t.Cleanup(p.Stop)
	return p
}

// baseEnv is the environment every harness platform process gets: its own
// listeners, data directory and database, the local-stack or container
// services, open rate limits and the test admins, in development mode (the
// embedded test processor, mail under DATA_DIR, private webhook targets).
func baseEnv(back Backing, dbURL, dataDir, addr, baseURL, metricsAddr string) map[string]string {
	return map[string]string{
		"PLATFORM_ENV":          "development",
		"PLATFORM_ADDR":         addr,
		"PUBLIC_BASE_URL":       baseURL,
		"METRICS_ADDR":          metricsAddr,
		"DATA_DIR":              dataDir,
		"DATABASE_URL":          dbURL,
		"CLICKHOUSE_ADDR":       back.ClickHouseAddr,
		"KAFKA_BROKERS":         back.KafkaBrokers,
		"LOG_LEVEL":             "warn",
		"DB_MAX_CONNS":          "20", // several platforms share the test server's connections
		"WEBHOOK_ALLOW_PRIVATE": "1",
		// Streams notice a client gone at a heartbeat's write: tests that
		// wait for a freed slot wait one second, not fifteen.
		"STREAM_HEARTBEAT":        "1s",
		"RATE_LIMIT_READ":         "0",
		"RATE_LIMIT_WRITE":        "0",
		"RATE_LIMIT_AUTH":         "0",
		"RATE_LIMIT_MONEY":        "0",
		"RATE_LIMIT_PARTNER":      "0",
		"RATE_LIMIT_PARTNER_IP":   "0",
		"ABUSE_BUDGETS":           "0",
		"FIAT_ADMIN_EMAILS":       FiatAdminEmail,
		"GOV_ADMIN_EMAILS":        GovAdminEmail,
		"CHARITY_ADMIN_EMAILS":    CharityAdminEmail,
		"REPUTATION_ADMIN_EMAILS": ReputationAdminEmail,
		"REPUTATION_SERVICE_KEY":  ReputationServiceKey,
	}
}

// productionEnv is all a production-mode process strictly needs. The SMTP
// server it names does not exist (nothing in these tests mails).
func productionEnv(t TB, back Backing, dbURL, dataDir, addr, baseURL, metricsAddr string) map[string]string {
	env := map[string]string{
		"PLATFORM_ADDR":            addr,
		"PUBLIC_BASE_URL":          baseURL,
		"METRICS_ADDR":             metricsAddr,
		"DATA_DIR":                 dataDir,
		"DATABASE_URL":             dbURL,
		"CLICKHOUSE_ADDR":          back.ClickHouseAddr,
		"DB_MAX_CONNS":             "20",
		"PROCESSOR_API_KEY":        "sk_test_not_a_real_key",
		"SMTP_URL":                 fmt.Sprintf("smtp://127.0.0.1:%d", FreePort(t)),
		"JWT_SECRET":               randomHex(t),
		"LEDGER_SALT":              randomHex(t),
		"PROCESSOR_WEBHOOK_SECRET": "whsec_" + randomBase64(t),
		"SIGNING_MASTER_KEY":       randomHex(t),
		"DATA_ENCRYPTION_KEY":      randomHex(t),
	}
	if back.KafkaBrokers != "" {
		env["KAFKA_BROKERS"] = back.KafkaBrokers
	}
	return env
}

// dropClickHouseDatabase removes, when the test ends, the ClickHouse database
// the sink creates for this instance (named after its Postgres database).
func dropClickHouseDatabase(t TB, addr, dbURL string) {
	cfg, err := pgx.ParseConfig(dbURL)
	if err != nil || addr == "" {
		return
	}
	name := cfg.Database
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := clickhouse.Connect(ctx, addr, "default")
		if err != nil {
			return
		}
		defer conn.Close()
		_ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name)
	})
}

// launch starts the process and waits for it to answer.
func (p *Platform) launch() {
	p.t.Helper()
	p.logBuf = &lockedBuffer{}
	args := p.args
	if len(args) == 0 {
		args = []string{"run"}
	}
	ready := p.ready
	if ready == "" {
		ready = p.BaseURL + "/api/platform/version"
	}
	bin := p.bin
	if bin == "" {
		bin = Binary(p.t)
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = p.Env
	p.cmd.Stdout = p.logBuf
	p.cmd.Stderr = p.logBuf
	if err := p.cmd.Start(); err != nil {
		p.t.Fatalf("start platform: %v", err)
	}
	p.exited = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(p.cmd, p.exited)
	if ready == "-" {
		return
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			p.t.Fatalf("platform %v exited during start:\n%s", args, p.Logs())
		default:
		}
		resp, err := http.Get(ready)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.t.Fatalf("platform %v did not answer within 60s:\n%s", args, p.Logs())
}

// Pid is the process id of the running process (0 when not started).
func (p *Platform) Pid() int {
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Logs returns what the process printed.
func (p *Platform) Logs() string { return p.logBuf.String() }

// Stop sends SIGTERM and waits for a graceful exit (SIGKILL after 30 s).
func (p *Platform) Stop() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// Kill stops the process at once with SIGKILL, as a crash would.
func (p *Platform) Kill() {
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// Restart starts the process again with the same database, data directory
// and ports (after Stop or Kill).
func (p *Platform) Restart() {
	p.t.Helper()
	p.launch()
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// NewID returns a fresh unique id (a ksuid) for test data.
