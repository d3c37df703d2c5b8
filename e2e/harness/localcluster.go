package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/storage/clickhouse"
)

// LocalCluster is the production shape on one machine, run by
// deploy/local/cluster.sh: HAProxy in front of two gateways, two processes
// of every consumer group, two relays, the broker as its own process, and
// Postgres primary + synchronous standby under Patroni and etcd. The test
// drives it through the proxy and injures its members by pid.
type LocalCluster struct {
	Dir      string // CLUSTER_DIR: data, logs (log/), pids (run/)
	PortBase int    // CLUSTER_PORT_BASE: where its block of ports starts
	// The addresses below all come from `cluster.sh env`, never from port
	// arithmetic here: the script owns its layout.
	url, etcdURL, kafkaAddr, promURL, amURL string
	gatewayURLs                             []string
	// Scope is Patroni's scope (its etcd keys live under /service/Scope).
	Scope string
	// metrics is each member's metrics address (host:port) by name.
	metrics map[string]string
	// DatabaseURL is the multi-host DSN (target_session_attrs=read-write)
	// of the superuser, for the tests' own reads and injuries;
	// AppDatabaseURL is what the platform connects as (platform_app).
	// Both come from `cluster.sh env` once the cluster is up.
	DatabaseURL, AppDatabaseURL string
	// PatroniURLs are the members' REST APIs; every change there wants
	// PatroniUser and PatroniPassword.
	PatroniURLs                  []string
	PatroniUser, PatroniPassword string
	// ClickHouseDB is the sink's database on the shared ClickHouse.
	ClickHouseDB string

	t         TB
	script    string
	env       []string
	faultOnce sync.Once
}

// LocalClusterPackages are the commands cluster.sh needs from Debian
// (`make cluster-deps` installs them).
var LocalClusterPackages = map[string]string{"etcd": "etcd-server", "etcdctl": "etcd-client", "patroni": "patroni", "haproxy": "haproxy",
	"pgbackrest": "pgbackrest",
	// the nemesis's faults: links, loss, clocks (cluster.sh fault)
	"iptables": "iptables", "tc": "iproute2", "faketime": "faketime"}

// NeedCluster fails the test (with CI set) or skips it (on a developer's
// machine) when the local cluster's Debian packages are missing.
func NeedCluster(t testing.TB) {
	t.Helper()
	if missing := MissingClusterPackages(); len(missing) > 0 {
		msg := fmt.Sprintf("the cluster needs Debian packages %v (make cluster-deps installs them)", missing)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

// MissingClusterPackages names the Debian packages whose commands are not on
// PATH.
func MissingClusterPackages() []string {
	var out []string
	for cmd, pkg := range LocalClusterPackages {
		if _, err := exec.LookPath(cmd); err != nil {
			out = append(out, pkg)
		}
	}
	return out
}

// StartLocalCluster brings a fresh cluster up in a new directory on a free
// block of ports (or CLUSTER_PORT_BASE) and tears it down when the test ends
// (its directory is kept, and named, when the test failed). extra is added to
// every platform process's environment.
func StartLocalCluster(t TB, failed func() bool, extra map[string]string) *LocalCluster {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatalf("%v", err)
	}
	// Under /tmp with mode 755: the postgres user must reach the data.
	dir, err := os.MkdirTemp("", "cluster-")
	if err != nil {
		t.Fatalf("cluster dir: %v", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatalf("cluster dir: %v", err)
	}
	// deploy/local/cluster.sh uses 32 ports from its base (Prometheus and
	// Alertmanager the last two).
	base := freePortBlock(t, 32)
	c := &LocalCluster{Dir: dir, PortBase: base, t: t, script: filepath.Join(root, "deploy", "local", "cluster.sh"),
		ClickHouseDB: fmt.Sprintf("cluster_%d", time.Now().UnixNano())}
	chAddr := os.Getenv("CLICKHOUSE_ADDR")
	if chAddr == "" {
		chAddr = "127.0.0.1:19000"
	}
	var lines []string
	for k, v := range extra {
		lines = append(lines, k+"="+v)
	}
	if err := os.WriteFile(filepath.Join(dir, "platform.env"), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatalf("platform.env: %v", err)
	}
	c.env = append(os.Environ(), "CLUSTER_DIR="+dir, "CLUSTER_PORT_BASE="+strconv.Itoa(base),
		"PLATFORM_BIN="+Binary(t), "CLICKHOUSE_ADDR="+chAddr, "CLICKHOUSE_DATABASE="+c.ClickHouseDB)
	t.Cleanup(func() {
		if out, err := c.script1("down"); err != nil {
			fmt.Fprintf(os.Stderr, "cluster.sh down: %v\n%s", err, out)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if conn, err := clickhouse.Connect(ctx, chAddr, "default"); err == nil {
			_ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+c.ClickHouseDB)
			conn.Close()
		}
		if failed() {
			fmt.Fprintf(os.Stderr, "cluster kept for inspection: %s (logs in log/)\n", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	c.Up()
	c.readEnv()
	return c
}

// readEnv takes the addresses and credentials from `cluster.sh env`.
func (c *LocalCluster) readEnv() {
	c.t.Helper()
	out, err := c.script1("env")
	if err != nil {
		c.t.Fatalf("cluster.sh env: %v\n%s", err, out)
	}
	env := map[string]string{}
	c.metrics = map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		// # metrics of NAME: http://ADDR/metrics
		if rest, ok := strings.CutPrefix(line, "# metrics of "); ok {
			if name, u, ok := strings.Cut(rest, ": "); ok {
				c.metrics[name] = strings.TrimSuffix(strings.TrimPrefix(u, "http://"), "/metrics")
			}
			continue
		}
		if k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "="); ok {
			env[k] = strings.Trim(v, "'")
		}
	}
	c.url, c.etcdURL, c.kafkaAddr = env["PLATFORM_URL"], env["ETCD_URL"], env["KAFKA_BROKERS"]
	c.promURL, c.amURL, c.Scope = env["PROMETHEUS_URL"], env["ALERTMANAGER_URL"], env["PATRONI_SCOPE"]
	c.gatewayURLs = strings.Split(env["GATEWAY_URLS"], ",")
	if c.url == "" || c.etcdURL == "" || c.kafkaAddr == "" || c.promURL == "" || c.amURL == "" || c.Scope == "" ||
		len(c.gatewayURLs) != 2 || c.metrics["gateway-1"] == "" {
		c.t.Fatalf("cluster.sh env lacks an address (PLATFORM_URL, ETCD_URL, KAFKA_BROKERS, PROMETHEUS_URL, ALERTMANAGER_URL, PATRONI_SCOPE, GATEWAY_URLS, metrics of gateway-1):\n%s", out)
	}
	c.DatabaseURL, c.AppDatabaseURL = env["ADMIN_DATABASE_URL"], env["DATABASE_URL"]
	c.PatroniURLs = strings.Split(env["PATRONI_URLS"], ",")
	c.PatroniUser, c.PatroniPassword = env["PATRONI_REST_USERNAME"], env["PATRONI_REST_PASSWORD"]
	if c.DatabaseURL == "" || c.AppDatabaseURL == "" || len(c.PatroniURLs) != 2 || c.PatroniPassword == "" {
		c.t.Fatalf("cluster.sh env lacks the database URLs or Patroni's credentials:\n%s", out)
	}
}

func (c *LocalCluster) script1(args ...string) ([]byte, error) {
	cmd := exec.Command(c.script, args...)
	cmd.Env = c.env
	return cmd.CombinedOutput()
}

// Up runs `cluster.sh up`: it starts every member that is not running and
// waits until the API answers through the proxy.
func (c *LocalCluster) Up() {
	c.t.Helper()
	if out, err := c.script1("up"); err != nil {
		c.t.Fatalf("cluster.sh up: %v\n%s", err, out)
	}
}

// Status is what `cluster.sh status` prints.
func (c *LocalCluster) Status() string {
	out, _ := c.script1("status")
	return string(out)
}

// URL is the API through HAProxy.
func (c *LocalCluster) URL() string { return c.url }

// GatewayURL is gateway i (0 or 1) itself, not through the proxy.
func (c *LocalCluster) GatewayURL(i int) string { return c.gatewayURLs[i] }

// EtcdURL is etcd's client URL.
func (c *LocalCluster) EtcdURL() string { return c.etcdURL }

// KafkaAddr is the broker's address.
func (c *LocalCluster) KafkaAddr() string { return c.kafkaAddr }

// PrometheusURL is the cluster's Prometheus, which evaluates the alert rules
// of deploy/prometheus/alerts.yml over every member (/api/v1/alerts).
func (c *LocalCluster) PrometheusURL() string { return c.promURL }

// AlertmanagerURL is the cluster's Alertmanager; CLUSTER_ALERT_WEBHOOK in
// the script's environment is its webhook receiver.
func (c *LocalCluster) AlertmanagerURL() string { return c.amURL }

// MetricsAddr is member name's metrics listener (host:port), "" if none.
func (c *LocalCluster) MetricsAddr(name string) string { return c.metrics[name] }

// Proxy is a Platform whose requests go through HAProxy; DataDir is the
// gateways' shared data directory (development mail, secrets).
func (c *LocalCluster) Proxy(client *http.Client) *Platform {
	return Remote(c.t, c.URL(), c.DatabaseURL, c.KafkaAddr(), filepath.Join(c.Dir, "data", "gateway"), client)
}

// Members names the platform processes (gateway-1, fiat-applier-2, …).
func (c *LocalCluster) Members() []string {
	files, _ := filepath.Glob(filepath.Join(c.Dir, "run", "*.pid"))
	var out []string
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".pid")
		switch {
		case name == "etcd", name == "haproxy", name == "broker", strings.HasPrefix(name, "patroni-"),
			name == "prometheus", name == "alertmanager":
		default:
			out = append(out, name)
		}
	}
	return out
}

// Started is when a member's process was last started: its pid file's
// modification time (cluster.sh writes it as it starts the process); zero
// when unknown.
func (c *LocalCluster) Started(member string) time.Time {
	st, err := os.Stat(filepath.Join(c.Dir, "run", member+".pid"))
	if err != nil {
		return time.Time{}
	}
	return st.ModTime()
}

// Pid is the pid of a member from its pid file (0 when unknown).
func (c *LocalCluster) Pid(member string) int {
	b, err := os.ReadFile(filepath.Join(c.Dir, "run", member+".pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// Signal sends sig to a member's process.
func (c *LocalCluster) Signal(member string, sig syscall.Signal) error {
	pid := c.Pid(member)
	if pid <= 0 {
		return fmt.Errorf("no pid for %s", member)
	}
	return syscall.Kill(pid, sig)
}

// patroniMember is what a Patroni REST API says of its node.
type patroniMember struct {
	Role  string `json:"role"`
	State string `json:"state"`
	// SyncStandby: a replica that Patroni's /sync key names, the only one
	// it will promote on its own in synchronous mode
	SyncStandby bool `json:"sync_standby"`
	Replication []struct {
		SyncState string `json:"sync_state"`
		State     string `json:"state"`
	} `json:"replication"`
}

func (c *LocalCluster) patroni(i int) (patroniMember, bool) {
	var m patroniMember
	hc := &http.Client{Timeout: 2 * time.Second}
	resp, err := hc.Get(c.PatroniURLs[i] + "/patroni")
	if err != nil {
		return m, false
	}
	defer resp.Body.Close()
	return m, json.NewDecoder(resp.Body).Decode(&m) == nil
}

// Primary is the index (0 or 1) of the member Patroni runs as primary, -1
// when none does.
func (c *LocalCluster) Primary() int {
	for i := 0; i < 2; i++ {
		if m, ok := c.patroni(i); ok && (m.Role == "master" || m.Role == "primary") && m.State == "running" {
			return i
		}
	}
	return -1
}

// Replicated reports whether a primary runs with the other member streaming
// as its synchronous standby, and Patroni's /sync key names that member: a
// primary lost before the key does is not failed over (Patroni promotes
// only the standby the key names), as a nemesis run found.
func (c *LocalCluster) Replicated() bool {
	p := c.Primary()
	if p < 0 {
		return false
	}
	if s, ok := c.patroni(1 - p); !ok || !s.SyncStandby {
		return false
	}
	m, _ := c.patroni(p)
	for _, r := range m.Replication {
		if r.State == "streaming" && (r.SyncState == "sync" || r.SyncState == "quorum") {
			return true
		}
	}
	return false
}

// PostmasterPid is the pid of member i's postmaster (postmaster.pid).
func (c *LocalCluster) PostmasterPid(i int) int {
	b, err := os.ReadFile(filepath.Join(c.Dir, "pg", fmt.Sprintf("data%d", i+1), "postmaster.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	return pid
}

// TerminateRelayLock ends, with pg_terminate_backend, the backend holding
// the relay's outbox advisory lock (key 0x6f7574626f78) on the primary, and
// reports whether one was found.
func (c *LocalCluster) TerminateRelayLock(ctx context.Context) (bool, error) {
	conn, err := pgx.Connect(ctx, c.DatabaseURL)
	if err != nil {
		return false, err
	}
	defer conn.Close(ctx)
	var n int
	err = conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND classid = $1 AND objid = $2 AND objsubid = 1`,
		uint32(0x6f75), uint32(0x74626f78)).Scan(&n)
	return n > 0, err
}

// freePortBlock returns the first port of n consecutive free loopback ports:
// CLUSTER_PORT_BASE when set, else a block found from 20000 up.
func freePortBlock(t TB, n int) int {
	t.Helper()
	if s := os.Getenv("CLUSTER_PORT_BASE"); s != "" {
		b, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("CLUSTER_PORT_BASE=%q: %v", s, err)
		}
		return b
	}
	handedOut.Lock()
	defer handedOut.Unlock()
next:
	for base := 20000; base+n < 32000; base += n {
		for p := base; p < base+n; p++ {
			if handedOut.ports[p] {
				continue next
			}
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				continue next
			}
			l.Close()
		}
		for p := base; p < base+n; p++ {
			handedOut.ports[p] = true
		}
		return base
	}
	t.Fatalf("no block of %d free ports", n)
	return 0
}

// Remote is a Platform for a running deployment at baseURL (nothing to
// start or stop): the typed helpers work against it. client sends its
// requests (nil: a 30 s timeout client).
func Remote(t TB, baseURL, dbURL, kafkaAddr, dataDir string, client *http.Client) *Platform {
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	return &Platform{BaseURL: baseURL, DatabaseURL: dbURL, KafkaAddr: kafkaAddr, DataDir: dataDir, t: t, client: client, logBuf: &lockedBuffer{}}
}

// Secret is a value of the secrets every platform process of the cluster
// shares (CLUSTER_DIR/secrets.env), e.g. PROCESSOR_WEBHOOK_SECRET.
func (c *LocalCluster) Secret(name string) string {
	c.t.Helper()
	raw, err := os.ReadFile(filepath.Join(c.Dir, "secrets.env"))
	if err != nil {
		c.t.Fatalf("cluster secrets: %v", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, name+"="); ok {
			return v
		}
	}
	c.t.Fatalf("cluster secrets: no %s", name)
	return ""
}

// Script runs `deploy/local/cluster.sh ARGS...` against this cluster (its
// directory and ports) and returns what it printed.
func (c *LocalCluster) Script(args ...string) ([]byte, error) { return c.script1(args...) }

// Env is `cluster.sh env` as KEY=VALUE pairs (the exports, unquoted).
func (c *LocalCluster) Env() []string {
	out, err := c.script1("env")
	if err != nil {
		c.t.Fatalf("cluster.sh env: %v\n%s", err, out)
	}
	var env []string
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "="); ok && strings.HasPrefix(line, "export ") {
			env = append(env, k+"="+strings.Trim(v, "'"))
		}
	}
	return env
}

// SetScriptEnv adds KEY=VALUE to the environment of the cluster.sh
// commands that follow (e.g. CLUSTER_ALERT_WEBHOOK, read when Alertmanager
// starts).
func (c *LocalCluster) SetScriptEnv(kv string) { c.env = append(c.env, kv) }

// Stop sends member SIGTERM and waits until its process is gone.
func (c *LocalCluster) Stop(member string, within time.Duration) {
	c.t.Helper()
	pid := c.Pid(member)
	if pid <= 0 {
		c.t.Fatalf("no pid for %s", member)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		c.t.Fatalf("stop %s: %v", member, err)
	}
	deadline := time.Now().Add(within)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			c.t.Fatalf("%s (pid %d) still runs %s after SIGTERM", member, pid, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Addr is one line of `cluster.sh addrs`: a member's own loopback address
// and, for a listener, its port (0 for a platform process, which only
// connects from Addr).
type Addr struct {
	IP   string
	Port int
}

// Addrs is the cluster's address layout (`cluster.sh addrs`): etcd@patroni-N
// (the etcd address member N knows), pg-N (member N's replication address),
// broker, and every platform process by name.
func (c *LocalCluster) Addrs() map[string]Addr {
	c.t.Helper()
	out, err := c.script1("addrs")
	if err != nil {
		c.t.Fatalf("cluster.sh addrs: %v\n%s", err, out)
	}
	m := map[string]Addr{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		port, _ := strconv.Atoi(f[2])
		m[f[0]] = Addr{IP: f[1], Port: port}
	}
	return m
}

// Fault runs `cluster.sh fault ARGS...` (cut, heal, netem, unnetem, clock,
// clear) and returns its output. The first call registers a cleanup that
// undoes every fault of the cluster when the test ends, failed or not
// (`cluster.sh down` does it too).
func (c *LocalCluster) Fault(args ...string) (string, error) {
	c.faultOnce.Do(func() {
		c.t.Cleanup(func() {
			if out, err := c.script1("fault", "clear"); err != nil {
				fmt.Fprintf(os.Stderr, "cluster.sh fault clear: %v\n%s", err, out)
			}
		})
	})
	out, err := c.script1(append([]string{"fault"}, args...)...)
	if err != nil {
		return string(out), fmt.Errorf("cluster.sh fault %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// KillMachine kills Postgres member i's machine: its Patroni and its
// postmaster together, with SIGKILL, as when a host dies.
func (c *LocalCluster) KillMachine(i int) error {
	patroni, pm := c.Pid(fmt.Sprintf("patroni-%d", i+1)), c.PostmasterPid(i)
	if patroni <= 0 || pm <= 0 {
		return fmt.Errorf("member %d: patroni pid %d, postmaster pid %d", i, patroni, pm)
	}
	err1 := syscall.Kill(patroni, syscall.SIGKILL)
	err2 := syscall.Kill(pm, syscall.SIGKILL)
	if err1 != nil {
		return err1
	}
	return err2
}

// ActiveRelay names the relay process holding the outbox lock (from its
// connection's source address), "" when none is found.
func (c *LocalCluster) ActiveRelay(ctx context.Context) string {
	conn, err := pgx.Connect(ctx, c.DatabaseURL)
	if err != nil {
		return ""
	}
	defer conn.Close(ctx)
	var addr string
	if conn.QueryRow(ctx, `SELECT host(a.client_addr) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
		WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1 AND l.objid = $2 AND l.objsubid = 1`,
		uint32(0x6f75), uint32(0x74626f78)).Scan(&addr) != nil {
		return ""
	}
	for name, a := range c.Addrs() {
		if a.IP == addr && strings.HasPrefix(name, "relay-") {
			return name
		}
	}
	return ""
}

// StartProxied is the harness's proxy mode: instead of one `platform run`,
// the target is a fresh local cluster (StartLocalCluster) reached through
// HAProxy. The Platform it returns sends every request to the proxy, with
// the conformance checker on (every answer is held to the documents the
// cluster serves, as for Start); its admin helpers (RegisterEmail of an
// admin address, ConfirmAdmin) run `platform admin verify` against the
// cluster's database, and VerifyEmail/MailedLink read the mail the gateways
// write to their shared data directory. MetricsAddr is gateway-1's metrics
// listener. The cluster runs with the harness's test admins, open rate
// limits and private webhook targets (as Start's processes do); extra
// overrides them. What does not work through the proxy: Logs, Stop, Kill,
// Restart and Pid (the cluster's members are its own, see LocalCluster),
// and fiatSecret's DATA_DIR/secrets file — the processor secret is
// c.Secret("PROCESSOR_WEBHOOK_SECRET").
func StartProxied(t TB, failed func() bool, extra map[string]string) (*Platform, *LocalCluster) {
	t.Helper()
	env := map[string]string{
		"WEBHOOK_ALLOW_PRIVATE": "1", "RATE_LIMIT_READ": "0", "RATE_LIMIT_WRITE": "0", "RATE_LIMIT_AUTH": "0",
		"RATE_LIMIT_MONEY": "0", "RATE_LIMIT_PARTNER": "0", "RATE_LIMIT_PARTNER_IP": "0", "ABUSE_BUDGETS": "0",
		"FIAT_ADMIN_EMAILS": FiatAdminEmail, "GOV_ADMIN_EMAILS": GovAdminEmail,
		"CHARITY_ADMIN_EMAILS": CharityAdminEmail, "REPUTATION_ADMIN_EMAILS": ReputationAdminEmail,
		"REPUTATION_SERVICE_KEY": ReputationServiceKey,
	}
	for k, v := range extra {
		env[k] = v
	}
	c := StartLocalCluster(t, failed, env)
	p := c.Proxy(nil)
	p.MetricsAddr = c.MetricsAddr("gateway-1")
	// `platform admin verify` (ConfirmAdmin) runs as the members do: in
	// development mode with the cluster's secrets and allowlists.
	p.Env = append(os.Environ(), "PLATFORM_ENV=development", "CLICKHOUSE_ADDR="+clickHouseAddr(),
		"CLICKHOUSE_DATABASE="+c.ClickHouseDB, "KAFKA_BROKERS="+c.KafkaAddr())
	if raw, err := os.ReadFile(filepath.Join(c.Dir, "secrets.env")); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			if strings.Contains(line, "=") {
				p.Env = append(p.Env, line)
			}
		}
	}
	for k, v := range env {
		p.Env = append(p.Env, k+"="+v)
	}
	return p, c
}

func clickHouseAddr() string {
	if a := os.Getenv("CLICKHOUSE_ADDR"); a != "" {
		return a
	}
	return "127.0.0.1:19000"
}

// DCSReport is what etcd holds of Patroni's keys (each with its lease and
// that lease's time to live) and which Patroni processes run: for a failure
// message when a failover does not come.
func (c *LocalCluster) DCSReport() string {
	auth, err := os.ReadFile(filepath.Join(c.Dir, "cluster-auth.env"))
	if err != nil {
		return fmt.Sprintf("cluster-auth.env: %v", err)
	}
	var root string
	for _, line := range strings.Split(string(auth), "\n") {
		if v, ok := strings.CutPrefix(line, "ETCD_ROOT_PASSWORD="); ok {
			root = v
		}
	}
	etcdctl := func(args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "etcdctl", append([]string{"--endpoints=" + c.EtcdURL(), "--user=root:" + root}, args...)...)
		cmd.Env = append(os.Environ(), "ETCDCTL_API=3")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Sprintf("%s: %v", out, err)
		}
		return string(out)
	}
	var b strings.Builder
	var got struct {
		Header struct {
			Revision int64 `json:"revision"`
		} `json:"header"`
		Kvs []struct {
			Key, Value  []byte
			Lease       int64 `json:"lease"`
			ModRevision int64 `json:"mod_revision"`
		} `json:"kvs"`
	}
	raw := etcdctl("get", "--prefix", "/service/", "-w", "json")
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		fmt.Fprintf(&b, "etcd: %s\n", raw)
	} else {
		fmt.Fprintf(&b, "etcd revision %d\n", got.Header.Revision)
		for _, kv := range got.Kvs {
			v := string(kv.Value)
			if len(v) > 160 {
				v = v[:160] + "…"
			}
			fmt.Fprintf(&b, "  %s (mod %d, lease %x) %s\n", kv.Key, kv.ModRevision, kv.Lease, v)
			if kv.Lease != 0 {
				fmt.Fprintf(&b, "    %s", etcdctl("lease", "timetolive", fmt.Sprintf("%x", kv.Lease)))
			}
		}
	}
	fmt.Fprintf(&b, "leases: %s", etcdctl("lease", "list"))
	if out, err := exec.Command("sh", "-c", "ps -eo pid,ppid,pgid,sid,etimes,args | grep -F "+c.Dir+" | grep -v grep").CombinedOutput(); err == nil || len(out) > 0 {
		fmt.Fprintf(&b, "processes of the cluster:\n%s", out)
	}
	for i := 1; i <= 2; i++ {
		if out, err := exec.Command("sh", "-c", fmt.Sprintf("grep -v 'ConnectionResetError\\|^  \\|Traceback\\|^$' %s | tail -n 15", filepath.Join(c.Dir, "log", fmt.Sprintf("patroni-%d.log", i)))).CombinedOutput(); err == nil {
			fmt.Fprintf(&b, "patroni-%d.log (last lines):\n%s", i, out)
		}
	}
	return b.String()
}
