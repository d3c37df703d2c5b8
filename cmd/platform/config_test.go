package main

import (
	"strings"
	"testing"
	"time"
)

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string
	}{
		{"defaults", nil, ""},
		{"bad duration", map[string]string{"JWT_TTL": "soon"}, "JWT_TTL"},
		{"negative limit", map[string]string{"RATE_LIMIT_MONEY": "-1"}, "RATE_LIMIT_MONEY"},
		{"short service key", map[string]string{"REPUTATION_SERVICE_KEY": "short"}, "REPUTATION_SERVICE_KEY"},
		{"bad flag", map[string]string{"KYC_AUTO_APPROVE": "yes"}, "KYC_AUTO_APPROVE"},
		{"schedule of four", map[string]string{"WEBHOOK_RETRY_SCHEDULE": "0s,1m,2m,3m"}, "WEBHOOK_RETRY_SCHEDULE"},
		{"bad base url", map[string]string{"PUBLIC_BASE_URL": "example.com"}, "PUBLIC_BASE_URL"},
		{"bad log level", map[string]string{"LOG_LEVEL": "loud"}, "LOG_LEVEL"},
		{"bad trace ratio", map[string]string{"OTEL_TRACES_SAMPLER_ARG": "2"}, "OTEL_TRACES_SAMPLER_ARG"},
		{"trace url not http", map[string]string{"TRACE_URL_TEMPLATE": "javascript:alert(1)//{traceId}"}, "TRACE_URL_TEMPLATE"},
		{"trace url without the id", map[string]string{"TRACE_URL_TEMPLATE": "http://127.0.0.1:16686/search"}, "TRACE_URL_TEMPLATE"},
		{"bad slow threshold", map[string]string{"SLOW_REQUEST_THRESHOLD": "fast"}, "SLOW_REQUEST_THRESHOLD"},
		{"alert url without secret", map[string]string{"RECONCILE_ALERT_URL": "https://ops.example.com/hook"}, "RECONCILE_ALERT_SECRET"},
		{"bad alert url", map[string]string{"RECONCILE_ALERT_URL": "ops", "RECONCILE_ALERT_SECRET": "0123456789abcdef"}, "RECONCILE_ALERT_URL"},
		{"production without a real processor", withProduction(map[string]string{"PROCESSOR_API_KEY": ""}), "PROCESSOR_API_KEY"},
		{"production with every required setting", withProduction(nil), ""},
		{"unknown environment", map[string]string{"PLATFORM_ENV": "staging"}, "PLATFORM_ENV"},
		{"production refuses KYC auto-approval", withProduction(map[string]string{"KYC_AUTO_APPROVE": "1"}), "KYC_AUTO_APPROVE"},
		{"production refuses private webhooks", withProduction(map[string]string{"WEBHOOK_ALLOW_PRIVATE": "1"}), "WEBHOOK_ALLOW_PRIVATE"},
		{"production requires SMTP", withProduction(map[string]string{"SMTP_URL": ""}), "SMTP_URL"},
		{"applied ids forgotten before the topics forget commands", map[string]string{"PROCESSED_RETENTION": "24h"}, "PROCESSED_RETENTION"},
		{"applied ids kept longer than the topics", map[string]string{"PROCESSED_RETENTION": "240h"}, ""},
		{"ai url without model", map[string]string{"AI_API_URL": "https://api.example.com/v1"}, "AI_MODEL"},
		{"bad ai url", map[string]string{"AI_API_URL": "api.example.com", "AI_MODEL": "m"}, "AI_API_URL"},
		{"negative ai limit", map[string]string{"AI_MONTHLY_LIMIT": "-1"}, "AI_MONTHLY_LIMIT"},
		{"zero stream heartbeat", map[string]string{"STREAM_HEARTBEAT": "0s"}, "STREAM_HEARTBEAT"},
		{"zero vacancy plan", map[string]string{"BUILD_PLAN_VACANCY_LIMIT": "0"}, "BUILD_PLAN_VACANCY_LIMIT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := LoadConfig(func(k string) string {
				if k == "PLATFORM_ENV" && tt.env[k] == "" {
					return "development"
				}
				return tt.env[k]
			})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if cfg.JWTTTL != 168*time.Hour || cfg.RateLimits.Money != 30 || len(cfg.WebhookRetry) != 5 || cfg.BuildPlanLimit != 5 ||
					cfg.StreamHeartbeat != 15*time.Second {
					t.Fatalf("defaults: %+v", cfg)
				}
				return
			}
			if err == nil || !strings.HasPrefix(oneLine(err), tt.wantErr+":") {
				t.Fatalf("err = %v, want one naming %s", err, tt.wantErr)
			}
		})
	}
}

func TestBadCommandLine(t *testing.T) {
	t.Setenv("JWT_TTL", "")
	t.Setenv("PLATFORM_ENV", "development")
	if code := runMain([]string{"frobnicate"}); code != 2 {
		t.Fatalf("unknown command exit = %d", code)
	}
	if code := runMain([]string{"migrate", "--nope"}); code != 2 {
		t.Fatalf("bad flag exit = %d", code)
	}
	t.Setenv("RATE_LIMIT_READ", "many")
	if code := runMain([]string{"migrate"}); code != 2 {
		t.Fatalf("bad config exit = %d", code)
	}
}

// productionEnv is what production mode strictly needs.
var productionEnv = map[string]string{
	"PLATFORM_ENV":             "production",
	"DATABASE_URL":             "postgres://db.internal/platform",
	"CLICKHOUSE_ADDR":          "ch.internal:9000",
	"PUBLIC_BASE_URL":          "https://pay.example.com",
	"PROCESSOR_API_KEY":        "sk_live_x",
	"SMTP_URL":                 "smtps://u:p@mail.example.com:465",
	"JWT_SECRET":               "9f2c4e7a1b3d5f60817263a4b5c6d7e8",
	"LEDGER_SALT":              "5f1c0e2a9b7d4c3e8a6f1b2d0c9e7a5b3d1f8e6c4a2b0d9f7e5c3a1b8d6f4e2c",
	"PROCESSOR_WEBHOOK_SECRET": "whsec_MfKQ9r8d2ut8sCh2Gn7i1ZbJ5xR3vHwLzA6eTYk0pUc=",
	"SIGNING_MASTER_KEY":       "9a3e7c1f5b2d8e4a6c0f3b9d1e7a5c2f8b4d6e0a3c9f1b7d5e2a8c4f6b0d3e9a",
	"DATA_ENCRYPTION_KEY":      "c4e8a2f6b0d3e9a1c7f5b2d8e4a6c0f3b9d1e7a5c2f8b4d6e0a3c9f1b7d5e2a8",
}

// withProduction is productionEnv with over applied ("" unsets).
func withProduction(over map[string]string) map[string]string {
	env := map[string]string{}
	for k, v := range productionEnv {
		env[k] = v
	}
	for k, v := range over {
		env[k] = v
	}
	return env
}

// TestProductionIsTheDefault: with nothing set the binary is in production
// mode and names, one problem each, every setting production needs.
func TestProductionIsTheDefault(t *testing.T) {
	t.Parallel()
	cfg, err := LoadConfig(func(string) string { return "" })
	if err == nil {
		t.Fatalf("an empty environment loaded: %+v", cfg)
	}
	got := map[string]bool{}
	for _, l := range lines(err) {
		name, _, ok := strings.Cut(l, ":")
		if !ok || got[name] {
			t.Fatalf("line %q: want one line per variable", l)
		}
		got[name] = true
	}
	want := []string{"DATABASE_URL", "CLICKHOUSE_ADDR", "PUBLIC_BASE_URL", "PROCESSOR_API_KEY", "SMTP_URL",
		"JWT_SECRET", "LEDGER_SALT", "PROCESSOR_WEBHOOK_SECRET", "SIGNING_MASTER_KEY", "DATA_ENCRYPTION_KEY"}
	for _, name := range want {
		if !got[name] {
			t.Errorf("%s not named; problems: %v", name, lines(err))
		}
	}
	if len(got) != len(want) {
		t.Errorf("problems %v, want exactly %v", lines(err), want)
	}
	dev, err := LoadConfig(func(k string) string {
		if k == "PLATFORM_ENV" {
			return "development"
		}
		return ""
	})
	if err != nil || !dev.development() || dev.DatabaseURL != defaultDatabaseURL {
		t.Fatalf("development: %v %+v", err, dev)
	}
}
