package main

import (
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestComposeNetworks: docker-compose.yml is four networks, not one flat
// one (issue 45): etcd and Patroni's REST API on a control network only the
// two Patroni members join; Postgres, ClickHouse and Kafka on a data network
// with no way out; HAProxy and the platform processes on the edge, the one
// network with a route out and the only one the proxy joins; Prometheus on
// a metrics network only, with Alertmanager (also on the edge, its
// webhook's way out) and what it scrapes (issue 46; TestComposeMonitoring).
func TestComposeNetworks(t *testing.T) {
	f, _ := readCompose(t)
	want := map[string]string{
		"etcd": "control", "etcd-auth": "control", "patroni-1": "control,data,metrics", "patroni-2": "control,data,metrics",
		"kafka-1": "data", "kafka-2": "data", "kafka-3": "data", "clickhouse": "data", "db-roles": "data",
		"haproxy": "edge", "migrate": "data,edge", "topics": "data,edge",
		"prometheus": "metrics", "alertmanager": "edge,metrics",
	}
	for _, name := range append([]string{"gateway-1", "gateway-2", "relay"}, composeGroups...) {
		want[name] = "data,edge,metrics"
	}
	for name, svc := range f.Services {
		w, ok := want[name]
		if !ok {
			t.Errorf("service %s: no network policy in this test; add it", name)
			continue
		}
		if got := svc.Networks.names(); got != w {
			t.Errorf("%s joins %q, want %q", name, got, w)
		}
	}
	for name, internal := range map[string]bool{"edge": false, "data": true, "control": true, "metrics": true} {
		n, ok := f.Networks[name]
		if !ok || n.Internal != internal || len(n.IPAM.Config) != 1 {
			t.Errorf("network %s: %+v (defined %v), want internal=%v with one subnet", name, n, ok, internal)
		}
	}
	if len(f.Networks) != 4 {
		t.Errorf("networks %v, want edge, data, control and metrics", f.Networks)
	}
	// Every fixed address lies in its network's subnet.
	for name, svc := range f.Services {
		for net, ip := range svc.Networks {
			if ip == "" {
				continue
			}
			sub := subnetOf(t, f, net)
			if a, err := netip.ParseAddr(ip); err != nil || !sub.Contains(a) {
				t.Errorf("%s: %s address %q outside %s", name, net, ip, sub)
			}
		}
	}
	// The gateways trust X-Forwarded-For from HAProxy's address by default;
	// TRUSTED_PROXIES replaces it (an outer TLS proxy's hop added).
	proxy := f.Services["haproxy"].Networks["edge"]
	for _, gw := range []string{"gateway-1", "gateway-2"} {
		v := f.Services[gw].Environment["TRUSTED_PROXIES"]
		if v != "${TRUSTED_PROXIES:-"+proxy+"/32}" {
			t.Errorf("%s: TRUSTED_PROXIES %q, want ${TRUSTED_PROXIES:-%s/32}", gw, v, proxy)
		}
		env := interpolate(v, map[string]string{"TRUSTED_PROXIES": proxy + "/32,10.0.0.7/32"}, map[string]string{})
		if _, err := LoadConfig(func(k string) string {
			if k == "TRUSTED_PROXIES" {
				return env
			}
			return productionEnv[k]
		}); err != nil {
			t.Errorf("%s: TRUSTED_PROXIES=%q does not load: %v", gw, env, err)
		}
	}
}

// TestComposePatroniREST: Patroni's REST API wants a password for every
// change (PATCH /config ran archive_command as postgres; /restart restarted
// it), listens only on the control network, and takes changes only from
// the member itself and that network.
func TestComposePatroniREST(t *testing.T) {
	f, raw := readCompose(t)
	control := subnetOf(t, f, "control")
	for _, p := range []string{"patroni-1", "patroni-2"} {
		svc := f.Services[p]
		e := svc.Environment
		if e["PATRONI_RESTAPI_USERNAME"] == "" || !strings.HasPrefix(e["PATRONI_RESTAPI_PASSWORD"], "${PATRONI_REST_PASSWORD:?") {
			t.Errorf("%s: REST authentication %q / %q, want a user and the required PATRONI_REST_PASSWORD", p,
				e["PATRONI_RESTAPI_USERNAME"], e["PATRONI_RESTAPI_PASSWORD"])
		}
		ip := svc.Networks["control"]
		if ip == "" || e["PATRONI_RESTAPI_LISTEN"] != ip+":8008" || e["PATRONI_RESTAPI_CONNECT_ADDRESS"] != ip+":8008" {
			t.Errorf("%s: REST listens on %q (connect %q), want its control address %q only", p,
				e["PATRONI_RESTAPI_LISTEN"], e["PATRONI_RESTAPI_CONNECT_ADDRESS"], ip)
		}
		if !strings.Contains(strings.Join(svc.Healthcheck.Test, " "), "PATRONI_RESTAPI_LISTEN") {
			t.Errorf("%s: health check %v does not ask the REST API where it listens", p, svc.Healthcheck.Test)
		}
	}
	if !strings.Contains(raw, "PATRONI_REST_PASSWORD:?PATRONI_REST_PASSWORD is required") {
		t.Error("PATRONI_REST_PASSWORD is not required")
	}
	// The backups are encrypted, their passphrase from the environment.
	for _, p := range []string{"patroni-1", "patroni-2"} {
		if !strings.HasPrefix(f.Services[p].Environment["PGBACKREST_REPO1_CIPHER_PASS"], "${BACKUP_CIPHER_PASS:?") {
			t.Errorf("%s: PGBACKREST_REPO1_CIPHER_PASS is not the required BACKUP_CIPHER_PASS", p)
		}
	}
	if conf, err := os.ReadFile("../../deploy/patroni/pgbackrest.conf"); err != nil || !strings.Contains(string(conf), "\nrepo1-cipher-type=aes-256-cbc\n") {
		t.Errorf("deploy/patroni/pgbackrest.conf does not encrypt the repository (%v)", err)
	}
	b, err := os.ReadFile("../../deploy/patroni/patroni.yml")
	if err != nil {
		t.Fatal(err)
	}
	var pat struct {
		RestAPI struct {
			Allowlist []string `yaml:"allowlist"`
			Members   bool     `yaml:"allowlist_include_members"`
		} `yaml:"restapi"`
		Bootstrap struct {
			PgHBA []string `yaml:"pg_hba"`
		} `yaml:"bootstrap"`
	}
	if err := yaml.Unmarshal(b, &pat); err != nil {
		t.Fatal(err)
	}
	if len(pat.RestAPI.Allowlist) == 0 {
		t.Fatal("patroni.yml: no restapi.allowlist")
	}
	for _, a := range pat.RestAPI.Allowlist {
		p, err := netip.ParsePrefix(a)
		if err != nil || !(p == netip.MustParsePrefix("127.0.0.1/32") || (p.Bits() >= control.Bits() && control.Contains(p.Addr()))) {
			t.Errorf("patroni.yml allowlist %q: want the member itself and the control network %s only", a, control)
		}
	}
	for _, l := range pat.Bootstrap.PgHBA {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "host" && f[len(f)-1] == "trust" {
			t.Errorf("patroni.yml pg_hba %q trusts TCP", l)
		}
	}
}

// TestComposeLeastPrivilege: the serving processes connect to Postgres as
// platform_app and never hold the superuser's password; migrations run as
// platform_owner (roles.sql, created at bootstrap); ClickHouse has a
// password; etcd is reached by the Patroni members only.
func TestComposeLeastPrivilege(t *testing.T) {
	f, _ := readCompose(t)
	userOf := func(dsn string) string {
		u, err := url.Parse(strings.Split(interpolate(dsn, map[string]string{"PLATFORM_DB_PASSWORD": "p", "MIGRATE_DB_PASSWORD": "m"},
			map[string]string{}), ",")[0])
		if err != nil || u.User == nil {
			return ""
		}
		return u.User.Username()
	}
	for name, svc := range f.Services {
		for k, v := range svc.Environment {
			if strings.Contains(v, "${POSTGRES_PASSWORD") && !strings.HasPrefix(name, "patroni-") {
				t.Errorf("%s: %s holds the superuser's password", name, k)
			}
		}
		if svc.Environment["PLATFORM_ENV"] == "" {
			continue
		}
		want := "platform_app"
		if name == "migrate" {
			want = "platform_owner"
		}
		if u := userOf(svc.Environment["DATABASE_URL"]); u != want {
			t.Errorf("%s connects as %q, want %s", name, u, want)
		}
		if svc.Environment["CLICKHOUSE_USER"] != "platform" || !strings.HasPrefix(svc.Environment["CLICKHOUSE_PASSWORD"], "${CLICKHOUSE_PASSWORD:?") {
			t.Errorf("%s: ClickHouse user %q password %q", name, svc.Environment["CLICKHOUSE_USER"], svc.Environment["CLICKHOUSE_PASSWORD"])
		}
	}
	ch := f.Services["clickhouse"].Environment
	if _, skip := ch["CLICKHOUSE_SKIP_USER_SETUP"]; skip || ch["CLICKHOUSE_USER"] != "platform" ||
		!strings.HasPrefix(ch["CLICKHOUSE_PASSWORD"], "${CLICKHOUSE_PASSWORD:?") {
		t.Errorf("clickhouse: %v, want the platform user with the required password and no passwordless default", ch)
	}
	if hc := strings.Join(f.Services["clickhouse"].Healthcheck.Test, " "); !strings.Contains(hc, "--password") {
		t.Errorf("clickhouse health check %q logs in without the password", hc)
	}
	for _, p := range []string{"patroni-1", "patroni-2"} {
		e := f.Services[p].Environment
		if !strings.HasPrefix(e["PLATFORM_DB_PASSWORD"], "${PLATFORM_DB_PASSWORD:?") || !strings.HasPrefix(e["MIGRATE_DB_PASSWORD"], "${MIGRATE_DB_PASSWORD:?") {
			t.Errorf("%s: post_bootstrap cannot create the roles: %v", p, e)
		}
	}
	if db := f.Services["db-roles"]; !strings.Contains(strings.Join(db.Command, " ")+fmtEntrypoint(t, "db-roles"), "event_log_owner.sql") {
		t.Error("db-roles does not hand the event log to platform_app")
	}

	// roles.sql: what the roles may do.
	sql, err := os.ReadFile("../../deploy/patroni/roles.sql")
	if err != nil {
		t.Fatal(err)
	}
	s := string(sql)
	for _, want := range []string{
		"ALTER ROLE platform_app NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION",
		"ALTER ROLE platform_owner NOSUPERUSER",
		"CREATE DATABASE platform OWNER platform_owner",
		"REVOKE ALL ON DATABASE platform FROM PUBLIC",
		"GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO platform_app",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("roles.sql lacks %q", want)
		}
	}
	if regexp.MustCompile(`(?i)GRANT\s+(ALL|TRUNCATE|REFERENCES|TRIGGER)[^;]*TO platform_app`).MatchString(s) {
		t.Error("roles.sql grants platform_app more than reading and writing rows")
	}
	for _, file := range []string{"post_bootstrap.sh", "Dockerfile"} {
		b, err := os.ReadFile("../../deploy/patroni/" + file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "roles.sql") {
			t.Errorf("deploy/patroni/%s does not use roles.sql", file)
		}
	}
	// etcd: no published port, and only the control network.
	if e := f.Services["etcd"]; len(e.Ports) != 0 || !slices.Equal(strings.Split(e.Networks.names(), ","), []string{"control"}) {
		t.Errorf("etcd: ports %v, networks %v", e.Ports, e.Networks)
	}
}

// fmtEntrypoint is a service's entrypoint as one string (readCompose does
// not decode it).
func fmtEntrypoint(t *testing.T, service string) string {
	t.Helper()
	_, raw := readCompose(t)
	var f struct {
		Services map[string]struct {
			Entrypoint []string `yaml:"entrypoint"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal([]byte(raw), &f); err != nil {
		t.Fatal(err)
	}
	return strings.Join(f.Services[service].Entrypoint, " ")
}

// subnetOf is the subnet of network name.
func subnetOf(t *testing.T, f composeFile, name string) netip.Prefix {
	t.Helper()
	n, ok := f.Networks[name]
	if !ok || len(n.IPAM.Config) != 1 {
		t.Fatalf("network %s: not defined with one subnet", name)
	}
	p, err := netip.ParsePrefix(n.IPAM.Config[0].Subnet)
	if err != nil {
		t.Fatalf("network %s: %v", name, err)
	}
	return p
}

// TestClickHouseCredentials: CLICKHOUSE_USER and CLICKHOUSE_PASSWORD reach
// the connection (compose's ClickHouse has no passwordless user); unset, the
// local stack's passwordless default user.
func TestClickHouseCredentials(t *testing.T) {
	env := map[string]string{"PLATFORM_ENV": "development"}
	get := func(k string) string { return env[k] }
	cfg, err := LoadConfig(get)
	if err != nil {
		t.Fatal(err)
	}
	if a := (&app{cfg: cfg}).clickhouseCredentials(); a.User != "default" || a.Password != "" {
		t.Errorf("unset: %+v, want default without a password", a)
	}
	env["CLICKHOUSE_USER"], env["CLICKHOUSE_PASSWORD"] = "platform", " s3cret "
	if cfg, err = LoadConfig(get); err != nil {
		t.Fatal(err)
	}
	if a := (&app{cfg: cfg}).clickhouseCredentials(); a.User != "platform" || a.Password != " s3cret " {
		t.Errorf("set: %+v, want platform with the password as given", a)
	}
}

// TestComposeEtcdAuth: etcd turns authentication on (etcd-auth, before any
// Patroni member starts), and the members log in as a user limited to
// Patroni's keys: a write to etcd would otherwise bypass the REST API's
// password.
func TestComposeEtcdAuth(t *testing.T) {
	f, raw := readCompose(t)
	var deps struct {
		Services map[string]struct {
			DependsOn  map[string]struct{ Condition string } `yaml:"depends_on"`
			Entrypoint []string                              `yaml:"entrypoint"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal([]byte(raw), &deps); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"patroni-1", "patroni-2"} {
		e := f.Services[p].Environment
		if e["PATRONI_ETCD3_USERNAME"] != "patroni" || !strings.HasPrefix(e["PATRONI_ETCD3_PASSWORD"], "${ETCD_PATRONI_PASSWORD:?") {
			t.Errorf("%s: etcd user %q password %q", p, e["PATRONI_ETCD3_USERNAME"], e["PATRONI_ETCD3_PASSWORD"])
		}
		if deps.Services[p].DependsOn["etcd-auth"].Condition != "service_completed_successfully" {
			t.Errorf("%s starts before etcd-auth has finished: %v", p, deps.Services[p].DependsOn)
		}
	}
	a := f.Services["etcd-auth"]
	if fmt.Sprint(deps.Services["etcd-auth"].Entrypoint) != "[/etc/patroni/etcd_auth.sh]" ||
		!strings.HasPrefix(a.Environment["ETCD_ROOT_PASSWORD"], "${ETCD_ROOT_PASSWORD:?") ||
		deps.Services["etcd-auth"].DependsOn["etcd"].Condition != "service_healthy" {
		t.Errorf("etcd-auth: %v, entrypoint %v, depends on %v", a.Environment, deps.Services["etcd-auth"].Entrypoint,
			deps.Services["etcd-auth"].DependsOn)
	}
	for name, svc := range f.Services {
		if name == "etcd-auth" {
			continue
		}
		for k, v := range svc.Environment {
			if strings.Contains(v, "${ETCD_ROOT_PASSWORD") {
				t.Errorf("%s: %s holds etcd's root password", name, k)
			}
		}
	}
	script, err := os.ReadFile("../../deploy/patroni/etcd_auth.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"role grant-permission patroni --prefix=true readwrite /service/", "auth enable"} {
		if !strings.Contains(string(script), want) {
			t.Errorf("etcd_auth.sh lacks %q", want)
		}
	}
	docker, err := os.ReadFile("../../deploy/patroni/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(docker), "etcd-client") || !strings.Contains(string(docker), "etcd_auth.sh") {
		t.Error("the Patroni image lacks etcdctl or etcd_auth.sh")
	}
}
