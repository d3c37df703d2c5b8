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
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/quotedprintable"
	"net"
	"net/http"
	"net/mail"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/segmentio/ksuid"

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

// Binary returns the platform binary: $PLATFORM_BIN (set by `make test`), or
// one built once per test process.
func Binary(t TB) string {
	t.Helper()
	if p := os.Getenv("PLATFORM_BIN"); p != "" {
		return p
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "platform-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "platform")
		root, err := moduleRoot()
		if err != nil {
			buildErr = err
			return
		}
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/platform")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build platform: %v", buildErr)
	}
	return binPath
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the test directory")
		}
		dir = parent
	}
}

// FreePort returns a loopback port that is free now, from the private range
// 10000–17999: below the kernel's ephemeral range (32768 and up), where an
// outgoing connection of any process may take a port between the moment it
// was found free and the moment the platform binds it (a METRICS_ADDR once
// lost that race), and below the cluster's blocks (20000–32000). The scan
// starts at a random port so that test processes running side by side
// rarely try the same ones; this process never hands a port out twice.
func FreePort(t TB) int {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	const from, to = 10000, 18000
	start := from + rand.IntN(to-from)
	for i := 0; i < to-from; i++ {
		port := from + (start-from+i)%(to-from)
		if handedOut.ports[port] {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		l.Close()
		handedOut.ports[port] = true
		return port
	}
	t.Fatalf("free port: none free in %d-%d", from, to-1)
	return 0
}

// handedOut remembers the ports FreePort gave this test process.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

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

// Response is an HTTP answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a map.
func (r Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("response is not a JSON object (status %d): %s", r.Status, r.Body)
	}
	return m
}

// Decode decodes the body into v.
func (r Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode response (status %d): %v: %s", r.Status, err, r.Body)
	}
}

// Request is an HTTP request to the platform.
type Request struct {
	Method string
	Path   string
	Token  string
	Body   any // marshalled to JSON unless []byte or string
	// Headers are set on the request; an empty value removes the header.
	Headers map[string]string
}

// Do sends req and returns the answer; transport errors fail the test.
func (p *Platform) Do(t testing.TB, req Request) Response {
	t.Helper()
	var sent []byte
	switch b := req.Body.(type) {
	case nil:
	case []byte:
		sent = b
	case string:
		sent = []byte(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("encode request: %v", err)
		}
		sent = raw
	}
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(sent)
	}
	hreq, err := http.NewRequest(req.Method, p.BaseURL+req.Path, body)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if req.Body != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	if req.Token != "" {
		hreq.Header.Set("Authorization", "Bearer "+req.Token)
	}
	for k, v := range req.Headers {
		if v == "" {
			hreq.Header.Del(k) // an empty value sends no such header
			continue
		}
		hreq.Header.Set(k, v)
	}
	resp, err := p.client.Do(hreq)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.Path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s %s: %v", req.Method, req.Path, err)
	}
	out := Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
	p.check(t, req, sent, out)
	return out
}

// Get is a GET with an optional token.
func (p *Platform) Get(t testing.TB, path, token string) Response {
	t.Helper()
	return p.Do(t, Request{Method: http.MethodGet, Path: path, Token: token})
}

// Post is a JSON POST with an optional token.
func (p *Platform) Post(t testing.TB, path, token string, body any) Response {
	t.Helper()
	return p.Do(t, Request{Method: http.MethodPost, Path: path, Token: token, Body: body})
}

// User is a registered account.
type User struct {
	ID, Email, Password, Token string
}

// RegisterEmail creates a user with the given e-mail, or logs in when it
// exists already (admin addresses are shared by the tests of a platform).
func (p *Platform) RegisterEmail(t testing.TB, email string) User {
	t.Helper()
	u := User{Email: email, Password: "correct-horse-1"}
	resp := p.Post(t, "/api/auth/register", "", map[string]string{"email": u.Email, "password": u.Password})
	if resp.Status == http.StatusConflict {
		resp = p.Post(t, "/api/auth/login", "", map[string]string{"email": u.Email, "password": u.Password})
	}
	if resp.Status != http.StatusCreated && resp.Status != http.StatusOK {
		t.Fatalf("register %s: %d %s", u.Email, resp.Status, resp.Body)
	}
	var out struct {
		Token string `json:"token"`
		User  struct {
			ID string `json:"id"`
		} `json:"user"`
	}
	resp.Decode(t, &out)
	u.ID, u.Token = out.User.ID, out.Token
	if IsAdminEmail(email) {
		p.ConfirmAdmin(t, email)
	}
	return u
}

// ConfirmAdmin makes the (self-registered) account of an allow-listed
// address an admin the way an operator does, on the server: `platform admin
// verify --i-know-who-registered`, once per platform and address. The web
// verification link never confers the role.
func (p *Platform) ConfirmAdmin(t testing.TB, email string) {
	t.Helper()
	p.confirmedMu.Lock()
	defer p.confirmedMu.Unlock()
	if p.confirmed[strings.ToLower(email)] {
		return
	}
	bin := p.bin
	if bin == "" {
		bin = Binary(t)
	}
	cmd := exec.Command(bin, "admin", "verify", "--i-know-who-registered", email)
	// The allowlists the harness's servers read, so that the command can
	// report the role they confer (a cluster's members keep theirs in their
	// own environment).
	cmd.Env = append(append([]string(nil), p.Env...), "DATABASE_URL="+p.DatabaseURL)
	for _, l := range []string{"FIAT_ADMIN_EMAILS=" + FiatAdminEmail, "GOV_ADMIN_EMAILS=" + GovAdminEmail,
		"CHARITY_ADMIN_EMAILS=" + CharityAdminEmail, "REPUTATION_ADMIN_EMAILS=" + ReputationAdminEmail} {
		name, _, _ := strings.Cut(l, "=")
		if !slices.ContainsFunc(p.Env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") }) {
			cmd.Env = append(cmd.Env, l)
		}
	}
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "role now: admin") {
		t.Fatalf("platform admin verify %s: %v\n%s", email, err, out)
	}
	if p.confirmed == nil {
		p.confirmed = map[string]bool{}
	}
	p.confirmed[strings.ToLower(email)] = true
}

// IsAdminEmail reports whether email is one of the harness's admin
// addresses.
func IsAdminEmail(email string) bool {
	switch strings.ToLower(email) {
	case FiatAdminEmail, GovAdminEmail, CharityAdminEmail, ReputationAdminEmail:
		return true
	}
	return false
}

// VerifyEmail proves u owns its address the way a person does: it asks for
// the one-time link, reads the message the platform wrote to
// DATA_DIR/mail (no SMTP_URL in tests) and opens the link.
func (p *Platform) VerifyEmail(t testing.TB, u User) {
	t.Helper()
	if resp := p.Post(t, "/api/auth/verify-email", u.Token, map[string]any{}); resp.Status != http.StatusOK {
		t.Fatalf("ask verification of %s: %d %s", u.Email, resp.Status, resp.Body)
	}
	link := p.MailedLink(t, u.Email, "/api/auth/verify-email?token=")
	// The link opens a page (a GET confirms nothing); its button posts the
	// token.
	if resp := p.Get(t, strings.TrimPrefix(link, p.BaseURL), ""); resp.Status != http.StatusOK {
		t.Fatalf("open the verification link of %s: %d %s", u.Email, resp.Status, resp.Body)
	}
	if resp := p.Post(t, "/api/auth/verify-email/confirm", "", map[string]string{"token": LinkToken(t, link)}); resp.Status != http.StatusOK {
		t.Fatalf("verify %s: %d %s", u.Email, resp.Status, resp.Body)
	}
}

// LinkToken is the token query parameter of a mailed verification link.
func LinkToken(t testing.TB, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil || u.Query().Get("token") == "" {
		t.Fatalf("no token in the link %q (%v)", link, err)
	}
	return u.Query().Get("token")
}

// MailedLink returns the newest link containing marker in a message the
// platform wrote to DATA_DIR/mail for the address to.
func (p *Platform) MailedLink(t testing.TB, to, marker string) string {
	t.Helper()
	if link := p.LinkInMail(to, marker); link != "" {
		return link
	}
	t.Fatalf("no mail to %s with a link containing %q in %s", to, marker, filepath.Join(p.DataDir, "mail"))
	return ""
}

// LinkInMail is MailedLink without failing: "" when no such mail was
// written yet (for mail sent after the answer, polled with Eventually).
func (p *Platform) LinkInMail(to, marker string) string {
	files, _ := filepath.Glob(filepath.Join(p.DataDir, "mail", "*.eml"))
	sort.Sort(sort.Reverse(sort.StringSlice(files)))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		msg, err := mail.ReadMessage(bytes.NewReader(raw))
		if err != nil || !strings.Contains(strings.ToLower(msg.Header.Get("To")), strings.ToLower(to)) {
			continue
		}
		var body io.Reader = msg.Body
		if strings.EqualFold(msg.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
			body = quotedprintable.NewReader(msg.Body)
		}
		text, _ := io.ReadAll(body)
		for _, field := range strings.Fields(string(text)) {
			if strings.Contains(field, marker) {
				return field
			}
		}
	}
	return ""
}

// Register creates a user with a unique e-mail (prefix@…) and returns it.
func (p *Platform) Register(t testing.TB, prefix string) User {
	t.Helper()
	u := User{Email: fmt.Sprintf("%s-%s@example.com", prefix, strings.ToLower(ksuid.New().String()[:10])), Password: "correct-horse-1"}
	resp := p.Post(t, "/api/auth/register", "", map[string]string{"email": u.Email, "password": u.Password, "name": prefix})
	if resp.Status != http.StatusCreated {
		t.Fatalf("register %s: %d %s", u.Email, resp.Status, resp.Body)
	}
	var out struct {
		Token string `json:"token"`
		User  struct {
			ID string `json:"id"`
		} `json:"user"`
	}
	resp.Decode(t, &out)
	u.ID, u.Token = out.User.ID, out.Token
	return u
}

// Eventually polls cond every 100 ms until it returns true or timeout passes.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s", timeout, what)
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
func NewID() string { return ksuid.New().String() }
