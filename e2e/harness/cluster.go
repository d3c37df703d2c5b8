package harness

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"time"

	"github.com/fintech/platform/storage/postgres/pgtest"
)

// Cluster is the split deployment: platform processes started one
// subcommand each (`platform gateway`, `platform consume GROUP`,
// `platform relay`) against one database and one external Kafka-protocol
// broker, sharing their secrets through the environment as a production
// deployment would. Every process has its own data directory and its own
// PLATFORM_ADDR and METRICS_ADDR.
type Cluster struct {
	DatabaseURL  string
	KafkaBrokers string
	// Env is the environment every process of the cluster shares (secrets
	// included: JWT_SECRET, LEDGER_SALT, PROCESSOR_WEBHOOK_SECRET,
	// SIGNING_MASTER_KEY, DATA_ENCRYPTION_KEY).
	Env map[string]string

	t    TB
	back Backing
}

// NewCluster makes a fresh database for processes that use the broker at
// kafkaBrokers; extra adds to (or overrides) their shared environment.
// Nothing runs until `platform migrate` (Run) and the processes are started.
func NewCluster(t TB, kafkaBrokers string, extra map[string]string) *Cluster {
	t.Helper()
	back := backingFor(t)
	back.KafkaBrokers = kafkaBrokers
	_, dbURL := pgtest.NewDB(t)
	dropClickHouseDatabase(t, back.ClickHouseAddr, dbURL)
	c := &Cluster{DatabaseURL: dbURL, KafkaBrokers: kafkaBrokers, t: t, back: back, Env: map[string]string{
		"JWT_SECRET":               randomHex(t),
		"LEDGER_SALT":              randomHex(t),
		"PROCESSOR_WEBHOOK_SECRET": "whsec_" + randomBase64(t),
		"SIGNING_MASTER_KEY":       randomHex(t),
		"DATA_ENCRYPTION_KEY":      randomHex(t),
	}}
	for k, v := range extra {
		c.Env[k] = v
	}
	return c
}

func randomHex(t TB) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("random: %v", err)
	}
	return hex.EncodeToString(b)
}

// randomBase64 is 32 random bytes in standard base64 (a whsec_ secret's
// body, as production requires).
func randomBase64(t TB) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("random: %v", err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// Run runs a subcommand to completion (e.g. "migrate") and returns what it
// printed; a non-zero exit fails the test.
func (c *Cluster) Run(args ...string) string {
	c.t.Helper()
	cmd := exec.Command(Binary(c.t), args...)
	cmd.Env = c.environ(c.t.TempDir(), "127.0.0.1:0", "", "off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		c.t.Fatalf("platform %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// Gateway starts `platform gateway` and waits until it answers.
func (c *Cluster) Gateway() *Platform {
	c.t.Helper()
	return c.start([]string{"gateway"}, true)
}

// Consume starts `platform consume group` and waits until its metrics
// listener answers.
func (c *Cluster) Consume(group string) *Platform {
	c.t.Helper()
	return c.start([]string{"consume", group}, false)
}

// Relay starts `platform relay` (the outbox relay), without waiting: it
// serves nothing to probe.
func (c *Cluster) Relay() *Platform {
	c.t.Helper()
	return c.start([]string{"relay"}, false)
}

func (c *Cluster) start(args []string, serves bool) *Platform {
	c.t.Helper()
	port := FreePort(c.t)
	p := &Platform{
		DatabaseURL: c.DatabaseURL,
		DataDir:     c.t.TempDir(),
		KafkaAddr:   c.KafkaBrokers,
		MetricsAddr: fmt.Sprintf("127.0.0.1:%d", FreePort(c.t)),
		t:           c.t,
		client:      &http.Client{Timeout: 30 * time.Second},
		args:        args,
	}
	switch {
	case serves:
		p.BaseURL = fmt.Sprintf("http://127.0.0.1:%d", port)
	case args[0] == "consume":
		p.ready = "http://" + p.MetricsAddr + "/metrics"
	default:
		p.ready = "-"
	}
	p.Env = c.environ(p.DataDir, fmt.Sprintf("127.0.0.1:%d", port), p.BaseURL, p.MetricsAddr)
	p.launch()
	c.t.Cleanup(p.Stop)
	return p
}

func (c *Cluster) environ(dataDir, addr, baseURL, metricsAddr string) []string {
	env := baseEnv(c.back, c.DatabaseURL, dataDir, addr, baseURL, metricsAddr)
	for k, v := range c.Env {
		env[k] = v
	}
	out := os.Environ()
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}
