package main

import (
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
		Environment map[string]string `yaml:"environment"`
		Ports       []string          `yaml:"ports"`
	} `yaml:"services"`
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
	"SIGNING_MASTER_KEY", "DATA_ENCRYPTION_KEY", "SMTP_URL", "POSTGRES_PASSWORD"}

// TestComposeRunsProduction: docker-compose.yml runs the platform in
// production mode, requires every secret with ${NAME:?NAME is required: …}
// (so `docker compose config` fails naming it), sets no development convenience,
// publishes on loopback unless told otherwise, and the environment it gives
// the platform passes the binary's own production checks.
func TestComposeRunsProduction(t *testing.T) {
	f, raw := readCompose(t)
	platforms := []string{"platform", "migrate", "topics"}
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
	for _, v := range f.Services["platform"].Environment {
		interpolate(v, nil, missing)
	}
	interpolate(f.Services["postgres"].Environment["POSTGRES_PASSWORD"], nil, missing)
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
		given[s] = strings.Repeat("s", 40)
	}
	given["PUBLIC_BASE_URL"] = "https://pay.example.com"
	// The keys in their formats (keyrules.go).
	for _, k := range []string{"LEDGER_SALT", "SIGNING_MASTER_KEY", "DATA_ENCRYPTION_KEY"} {
		given[k] = productionEnv[k]
	}
	given["PROCESSOR_WEBHOOK_SECRET"] = productionEnv["PROCESSOR_WEBHOOK_SECRET"]
	env := map[string]string{}
	miss := map[string]string{}
	for k, v := range f.Services["platform"].Environment {
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
