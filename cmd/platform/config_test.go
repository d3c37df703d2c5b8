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
		{"alert url without secret", map[string]string{"RECONCILE_ALERT_URL": "https://ops.example.com/hook"}, "RECONCILE_ALERT_SECRET"},
		{"bad alert url", map[string]string{"RECONCILE_ALERT_URL": "ops", "RECONCILE_ALERT_SECRET": "0123456789abcdef"}, "RECONCILE_ALERT_URL"},
		{"production without a real processor", map[string]string{"PLATFORM_ENV": "production"}, "PROCESSOR_API_KEY"},
		{"production with a real processor", map[string]string{"PLATFORM_ENV": "production", "PROCESSOR_API_KEY": "sk_live_x"}, ""},
		{"applied ids forgotten before the topics forget commands", map[string]string{"PROCESSED_RETENTION": "24h"}, "PROCESSED_RETENTION"},
		{"applied ids kept longer than the topics", map[string]string{"PROCESSED_RETENTION": "240h"}, ""},
		{"ai url without model", map[string]string{"AI_API_URL": "https://api.example.com/v1"}, "AI_MODEL"},
		{"bad ai url", map[string]string{"AI_API_URL": "api.example.com", "AI_MODEL": "m"}, "AI_API_URL"},
		{"negative ai limit", map[string]string{"AI_MONTHLY_LIMIT": "-1"}, "AI_MONTHLY_LIMIT"},
		{"zero vacancy plan", map[string]string{"BUILD_PLAN_VACANCY_LIMIT": "0"}, "BUILD_PLAN_VACANCY_LIMIT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := LoadConfig(func(k string) string { return tt.env[k] })
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if cfg.JWTTTL != 168*time.Hour || cfg.RateLimits.Money != 30 || len(cfg.WebhookRetry) != 5 || cfg.BuildPlanLimit != 5 {
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
