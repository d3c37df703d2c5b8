package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// composeFile is the part of docker-compose.yml these tests read.
type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Ports       []string          `yaml:"ports"`
		Volumes     []string          `yaml:"volumes"`
		Healthcheck *struct {
			Test []string `yaml:"test"`
		} `yaml:"healthcheck"`
		Deploy struct {
			Replicas int `yaml:"replicas"`
		} `yaml:"deploy"`
		Networks composeNetworks `yaml:"networks"`
	} `yaml:"services"`
	Networks map[string]struct {
		Internal bool `yaml:"internal"`
		IPAM     struct {
			Config []struct {
				Subnet string `yaml:"subnet"`
			} `yaml:"config"`
		} `yaml:"ipam"`
	} `yaml:"networks"`
}

// composeNetworks are the networks a service joins, each with its fixed
// address if it has one; compose writes them as a list or as a map.
type composeNetworks map[string]string

func (n *composeNetworks) UnmarshalYAML(v *yaml.Node) error {
	*n = composeNetworks{}
	if v.Kind == yaml.SequenceNode {
		var names []string
		if err := v.Decode(&names); err != nil {
			return err
		}
		for _, name := range names {
			(*n)[name] = ""
		}
		return nil
	}
	var m map[string]*struct {
		IPv4 string `yaml:"ipv4_address"`
	}
	if err := v.Decode(&m); err != nil {
		return err
	}
	for name, c := range m {
		(*n)[name] = ""
		if c != nil {
			(*n)[name] = c.IPv4
		}
	}
	return nil
}

func (n composeNetworks) names() string {
	var out []string
	for name := range n {
		out = append(out, name)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// composeRef is one ${NAME}, ${NAME:-default} or ${NAME:?message}.
var composeRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([-?])([^}]*))?\}`)

// interpolate expands s as compose does with env; each ${NAME:?message}
// whose NAME is unset or empty is an error naming it.
func interpolate(s string, env map[string]string, missing map[string]string) string {
	return composeRef.ReplaceAllStringFunc(s, func(ref string) string {
		m := composeRef.FindStringSubmatch(ref)
		v := env[m[1]]
		switch {
		case v != "":
			return v
		case m[2] == "-":
			return m[3]
		case m[2] == "?":
			missing[m[1]] = m[3]
		}
		return ""
	})
}

func readCompose(t *testing.T) (composeFile, string) {
	t.Helper()
	raw, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return f, string(raw)
}

// composeSecrets are what a compose deployment must be given: the
// production settings of LoadConfig it cannot fix itself, and the database
// password.
var composeSecrets = []string{"PUBLIC_BASE_URL", "JWT_SECRET", "LEDGER_SALT", "PROCESSOR_API_KEY", "PROCESSOR_WEBHOOK_SECRET",
	"SIGNING_MASTER_KEY", "DATA_ENCRYPTION_KEY", "SMTP_URL", "POSTGRES_PASSWORD", "REPLICATION_PASSWORD",
	"PLATFORM_DB_PASSWORD", "MIGRATE_DB_PASSWORD", "CLICKHOUSE_PASSWORD", "PATRONI_REST_PASSWORD", "ETCD_PATRONI_PASSWORD", "ETCD_ROOT_PASSWORD",
	"BACKUP_CIPHER_PASS"}

// TestComposeRunsProduction: docker-compose.yml runs the platform in
// production mode, requires every secret with ${NAME:?NAME is required: …}
// (so `docker compose config` fails naming it), sets no development convenience,
// publishes on loopback unless told otherwise, and the environment it gives
// the platform passes the binary's own production checks.
func TestComposeRunsProduction(t *testing.T) {
	f, raw := readCompose(t)
	platforms := []string{"gateway-1", "gateway-2", "relay", "migrate", "topics"}
	for _, g := range composeGroups {
		platforms = append(platforms, g)
	}
	for _, name := range platforms {
		svc, ok := f.Services[name]
		if !ok {
			t.Fatalf("service %s missing", name)
		}
		env := svc.Environment
		if env["PLATFORM_ENV"] != "production" {
			t.Errorf("%s: PLATFORM_ENV = %q, want production", name, env["PLATFORM_ENV"])
		}
		for _, dev := range []string{"KYC_AUTO_APPROVE", "WEBHOOK_ALLOW_PRIVATE"} {
			if v, ok := env[dev]; ok {
				t.Errorf("%s sets %s=%q", name, dev, v)
			}
		}
	}
	for _, s := range composeSecrets {
		if !strings.Contains(raw, "${"+s+":?"+s+" is required: ") {
			t.Errorf("%s is not required with ${%s:?%s is required: …}", s, s, s)
		}
		for _, m := range composeRef.FindAllStringSubmatch(raw, -1) {
			if m[1] == s && m[2] != "?" {
				t.Errorf("%s has a default or may be empty: %s", s, m[0])
			}
		}
	}
	for name, svc := range f.Services {
		for _, p := range svc.Ports {
			host := interpolate(p, nil, map[string]string{})
			if strings.Count(host, ":") != 2 || !strings.HasPrefix(host, "127.0.0.1:") {
				t.Errorf("%s publishes %q (%q by default): want an explicit bind address, loopback by default", name, p, host)
			}
			if !strings.HasPrefix(p, "${PLATFORM_PUBLISH_ADDR:-127.0.0.1}:") {
				t.Errorf("%s publishes %q: the bind address must be PLATFORM_PUBLISH_ADDR's", name, p)
			}
		}
	}

	// Nothing given: each secret is named.
	missing := map[string]string{}
	for _, v := range f.Services["gateway-1"].Environment {
		interpolate(v, nil, missing)
	}
	for _, svc := range []string{"patroni-1", "etcd-auth"} {
		for _, v := range f.Services[svc].Environment {
			interpolate(v, nil, missing)
		}
	}
	var names []string
	for n := range missing {
		names = append(names, n)
	}
	sort.Strings(names)
	want := append([]string(nil), composeSecrets...)
	sort.Strings(want)
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("with nothing set compose names %v, want %v", names, want)
	}

	// Everything given: the platform's environment loads in production mode.
	given := map[string]string{}
	for _, s := range composeSecrets {
		given[s] = hex.EncodeToString(randomBytes(t, 20)) // 40 random characters
	}
	// Keys in the formats production demands (README Configuration).
	for _, k := range []string{"DATA_ENCRYPTION_KEY", "SIGNING_MASTER_KEY", "LEDGER_SALT"} {
		given[k] = hex.EncodeToString(randomBytes(t, 32))
	}
	given["PROCESSOR_WEBHOOK_SECRET"] = "whsec_" + base64.StdEncoding.EncodeToString(randomBytes(t, 32))
	given["PUBLIC_BASE_URL"] = "https://pay.example.com"
	// The keys in their formats (keyrules.go).
	for _, k := range []string{"LEDGER_SALT", "SIGNING_MASTER_KEY", "DATA_ENCRYPTION_KEY"} {
		given[k] = productionEnv[k]
	}
	given["PROCESSOR_WEBHOOK_SECRET"] = productionEnv["PROCESSOR_WEBHOOK_SECRET"]
	env := map[string]string{}
	miss := map[string]string{}
	for k, v := range f.Services["gateway-1"].Environment {
		env[k] = interpolate(v, given, miss)
	}
	if len(miss) != 0 {
		t.Fatalf("missing with everything given: %v", miss)
	}
	cfg, err := LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("compose's platform environment does not load: %v", err)
	}
	if cfg.development() || cfg.processorMode() != "stripe" || cfg.KYCAutoApprove || cfg.WebhookPrivate {
		t.Fatalf("compose config: %+v", cfg)
	}
}

// composeGroups are the consumer groups compose runs, one service each.
var composeGroups = []string{"fiat-applier", "mask-applier", "reputation-applier", "ledger-appender", "trade-applier",
	"webhook-dispatcher", "clickhouse-sink"}

// TestComposeClusterShape: docker-compose.yml runs the production shape —
// HAProxy in front of two gateways, two processes of every consumer group
// (every group of the binary) and of the relay, a 3-broker KRaft Kafka with
// a volume each, replication factor 3 and min.insync.replicas=2, two
// Patroni members with etcd, the platform on a multi-host read-write DSN,
// TRUSTED_PROXIES naming the proxy, and a health check on every long-running
// service.
func TestComposeClusterShape(t *testing.T) {
	f, _ := readCompose(t)
	groups := map[string]bool{}
	for _, g := range strings.Split(groupNames(), ", ") {
		groups[g] = true
	}
	if len(groups) != len(composeGroups) {
		t.Errorf("the binary has groups %v, compose runs %v", groupNames(), composeGroups)
	}
	for _, g := range composeGroups {
		svc, ok := f.Services[g]
		if !ok || !groups[g] {
			t.Errorf("consumer group %s: service %v, a group of the binary %v", g, ok, groups[g])
			continue
		}
		if fmt.Sprint(svc.Command) != fmt.Sprint([]string{"consume", g}) || svc.Deploy.Replicas != 2 {
			t.Errorf("%s: command %v, replicas %d; want consume %s twice", g, svc.Command, svc.Deploy.Replicas, g)
		}
	}
	if r := f.Services["relay"]; fmt.Sprint(r.Command) != "[relay]" || r.Deploy.Replicas != 2 {
		t.Errorf("relay: command %v, replicas %d", r.Command, r.Deploy.Replicas)
	}
	for _, gw := range []string{"gateway-1", "gateway-2"} {
		svc := f.Services[gw]
		if fmt.Sprint(svc.Command) != "[gateway]" || len(svc.Ports) != 0 {
			t.Errorf("%s: command %v, ports %v (only the proxy is published)", gw, svc.Command, svc.Ports)
		}
		if tp := interpolate(svc.Environment["TRUSTED_PROXIES"], nil, map[string]string{}); tp != "172.30.0.10/32" {
			t.Errorf("%s: TRUSTED_PROXIES %q by default, want the proxy's address", gw, tp)
		}
		dsn := svc.Environment["DATABASE_URL"]
		if !strings.Contains(dsn, "@patroni-1:5432,patroni-2:5432/platform?") || !strings.Contains(dsn, "target_session_attrs=read-write") {
			t.Errorf("%s: DATABASE_URL %s: want both Patroni members and target_session_attrs=read-write", gw, dsn)
		}
		if svc.Environment["KAFKA_BROKERS"] != "kafka-1:9092,kafka-2:9092,kafka-3:9092" {
			t.Errorf("%s: KAFKA_BROKERS %q", gw, svc.Environment["KAFKA_BROKERS"])
		}
	}
	if p := f.Services["haproxy"]; len(p.Ports) != 1 || !strings.HasPrefix(p.Image, "haproxy:") {
		t.Errorf("haproxy: image %q, ports %v", p.Image, p.Ports)
	}
	for i := 1; i <= 3; i++ {
		k := f.Services[fmt.Sprintf("kafka-%d", i)]
		e := k.Environment
		if e["KAFKA_NODE_ID"] != fmt.Sprint(i) || e["KAFKA_DEFAULT_REPLICATION_FACTOR"] != "3" || e["KAFKA_MIN_INSYNC_REPLICAS"] != "2" ||
			e["KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR"] != "3" || e["KAFKA_CONTROLLER_QUORUM_VOTERS"] != "1@kafka-1:9093,2@kafka-2:9093,3@kafka-3:9093" ||
			e["KAFKA_UNCLEAN_LEADER_ELECTION_ENABLE"] != "false" {
			t.Errorf("kafka-%d: %v", i, e)
		}
		if len(k.Volumes) != 1 || !strings.HasSuffix(k.Volumes[0], ":"+e["KAFKA_LOG_DIRS"]) {
			t.Errorf("kafka-%d: volumes %v, log dirs %q: want the log dir on a volume", i, k.Volumes, e["KAFKA_LOG_DIRS"])
		}
	}
	for _, p := range []string{"patroni-1", "patroni-2"} {
		e := f.Services[p].Environment
		// its data directory, and the pgBackRest repository both members archive to
		if e["PATRONI_NAME"] != p || e["PATRONI_ETCD3_HOSTS"] != "etcd:2379" || len(f.Services[p].Volumes) != 2 ||
			f.Services[p].Volumes[1] != "pgbackrest:/var/lib/pgbackrest" {
			t.Errorf("%s: %v, volumes %v", p, e, f.Services[p].Volumes)
		}
	}
	raw, err := os.ReadFile("../../deploy/patroni/patroni.yml")
	if err != nil {
		t.Fatal(err)
	}
	var pat struct {
		Bootstrap struct {
			DCS map[string]any `yaml:"dcs"`
		} `yaml:"bootstrap"`
	}
	if err := yaml.Unmarshal(raw, &pat); err != nil {
		t.Fatal(err)
	}
	if pat.Bootstrap.DCS["synchronous_mode"] != true || pat.Bootstrap.DCS["maximum_lag_on_failover"] != 0 {
		t.Errorf("patroni.yml dcs: %v; want synchronous_mode and no failover to a lagging member", pat.Bootstrap.DCS)
	}
	for name, svc := range f.Services {
		if name == "migrate" || name == "topics" || name == "db-roles" || name == "etcd-auth" { // one-shot
			continue
		}
		if svc.Healthcheck == nil || len(svc.Healthcheck.Test) == 0 {
			t.Errorf("%s has no health check", name)
		}
	}
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}
