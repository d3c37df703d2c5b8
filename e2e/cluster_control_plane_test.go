package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/e2e/harness"
)

// TestClusterControlPlane: nobody but the cluster drives the local
// cluster's control plane (issue 45). Patroni's REST API refuses a change
// without its password (PATCH /config with an archive_command, which
// Postgres would run as postgres; POST /restart) and takes one with it;
// etcd refuses an anonymous write; Postgres wants a password over TCP and
// the platform's role is no superuser; the gateways believe X-Forwarded-For
// only from HAProxy's own loopback address, not from 127.0.0.1, which every
// local client shares.
func TestClusterControlPlane(t *testing.T) {
	t.Parallel() // a cluster start: see "Parallel tests" in main_test.go
	harness.NeedCluster(t)
	c := harness.StartLocalCluster(t, t.Failed, baseEnvForCluster())
	hc := &http.Client{Timeout: 5 * time.Second}
	send := func(method, u, user, pass, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, u, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, u, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	// Patroni: the outside review's PATCH /config, refused without the
	// password and with a wrong one; /restart too; the config unchanged.
	marker := fmt.Sprintf("/tmp/patroni-patch-%d", time.Now().UnixNano())
	evil := `{"postgresql":{"parameters":{"archive_command":"touch ` + marker + `"}}}`
	for i, base := range c.PatroniURLs {
		for _, who := range []struct{ user, pass string }{{"", ""}, {c.PatroniUser, "wrong"}, {"postgres", c.PatroniPassword}} {
			if st, body := send(http.MethodPatch, base+"/config", who.user, who.pass, evil); st != http.StatusUnauthorized {
				t.Errorf("member %d: PATCH /config as %q: %d %s, want 401", i, who.user, st, body)
			}
		}
		if st, body := send(http.MethodPost, base+"/restart", "", "", `{}`); st != http.StatusUnauthorized {
			t.Errorf("member %d: POST /restart without credentials: %d %s, want 401", i, st, body)
		}
		if st, body := send(http.MethodPost, base+"/switchover", "", "", `{"leader":"pg1"}`); st != http.StatusUnauthorized {
			t.Errorf("member %d: POST /switchover without credentials: %d %s, want 401", i, st, body)
		}
		if st, body := send(http.MethodGet, base+"/config", "", "", ""); st != http.StatusOK || strings.Contains(body, marker) {
			t.Errorf("member %d: GET /config: %d %s (the refused change must not be there)", i, st, body)
		}
	}
	// The password is what decides: with it, a change that changes nothing
	// is taken.
	if st, body := send(http.MethodPatch, c.PatroniURLs[0]+"/config", c.PatroniUser, c.PatroniPassword, `{"loop_wait":1}`); st != http.StatusOK {
		t.Errorf("PATCH /config with the credentials: %d %s, want 200", st, body)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("%s exists: the archive_command ran", marker)
	}

	// etcd: no anonymous write (Patroni's keys would bypass its REST API).
	key := base64.StdEncoding.EncodeToString([]byte("/service/" + c.Scope + "/config"))
	if st, body := send(http.MethodPost, c.EtcdURL()+"/v3/kv/put", "", "",
		`{"key":"`+key+`","value":"`+base64.StdEncoding.EncodeToString([]byte(evil))+`"}`); st == http.StatusOK && !strings.Contains(body, "error") {
		t.Errorf("etcd took an anonymous write: %d %s", st, body)
	}

	// Postgres: no password, no session; the platform's role is no superuser.
	// generous: a registration on a loaded machine takes seconds
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	u, err := url.Parse(c.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	host := strings.Split(u.Host, ",")[0]
	for _, user := range []string{"postgres", "platform_app", "platform_owner"} {
		if conn, err := pgx.Connect(ctx, "postgres://"+user+"@"+host+"/platform?sslmode=disable&connect_timeout=3"); err == nil {
			conn.Close(ctx)
			t.Errorf("%s connected to %s without a password", user, host)
		}
	}
	app, err := pgx.Connect(ctx, c.AppDatabaseURL)
	if err != nil {
		t.Fatalf("the platform's DSN: %v", err)
	}
	defer app.Close(ctx)
	var super, createRole bool
	if err := app.QueryRow(ctx, `SELECT rolsuper, rolcreaterole FROM pg_roles WHERE rolname = current_user`).Scan(&super, &createRole); err != nil || super || createRole {
		t.Errorf("the platform's role: superuser %v, createrole %v (%v)", super, createRole, err)
	}
	for _, sql := range []string{
		`ALTER SYSTEM SET archive_command = 'touch ` + marker + `'`,
		`COPY (SELECT 1) TO PROGRAM 'touch ` + marker + `'`,
		`CREATE ROLE intruder LOGIN SUPERUSER`,
		`DROP TABLE users`,
	} {
		if _, err := app.Exec(ctx, sql); err == nil {
			t.Errorf("platform_app ran %q", sql)
		}
	}

	// X-Forwarded-For: through HAProxy the client's address (127.0.0.1, the
	// hop HAProxy appends) is believed, not HAProxy's own; sent straight to
	// a gateway from 127.0.0.1, a forged one is not.
	spoof := map[string]string{"X-Forwarded-For": "203.0.113.9"}
	db, err := pgx.Connect(ctx, c.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	registeredFrom := func(p *harness.Platform, prefix string) string {
		t.Helper()
		email := fmt.Sprintf("%s-%d@example.com", prefix, time.Now().UnixNano())
		resp := p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/auth/register", Headers: spoof,
			Body: map[string]string{"email": email, "password": "correct-horse-1"}})
		if resp.Status != http.StatusCreated {
			t.Fatalf("register via %s: %d %s", p.BaseURL, resp.Status, resp.Body)
		}
		var ip *string
		harness.Eventually(t, time.Minute, "the user row of "+email, func() bool {
			return db.QueryRow(ctx, `SELECT registration_ip FROM users WHERE email = $1`, email).Scan(&ip) == nil && ip != nil
		})
		return *ip
	}
	if ip := registeredFrom(c.Proxy(nil), "xff-proxy"); ip != "127.0.0.1" {
		t.Errorf("through HAProxy the client is %q, want 127.0.0.1 (HAProxy's hop believed, the forged one not)", ip)
	}
	direct := harness.Remote(t, c.GatewayURL(0), c.DatabaseURL, c.KafkaAddr(), "", nil)
	if ip := registeredFrom(direct, "xff-direct"); ip != "127.0.0.1" {
		t.Errorf("straight to a gateway with a forged X-Forwarded-For the client is %q, want 127.0.0.1", ip)
	}

	// A second `up` finds etcd's authentication, the roles and the
	// passwords in place (the nemesis test runs one after its faults).
	c.Up()
	if st, body := send(http.MethodPatch, c.PatroniURLs[1]+"/config", "", "", evil); st != http.StatusUnauthorized {
		t.Errorf("after a second up: PATCH /config without credentials: %d %s, want 401", st, body)
	}
}
