package main

import (
	"strings"
	"testing"
)

// TestPublicBaseURLFollowsPlatformAddr: left unset, PUBLIC_BASE_URL is the
// URL of PLATFORM_ADDR; set to another host or port, start-up warns.
func TestPublicBaseURLFollowsPlatformAddr(t *testing.T) {
	// The development default (production requires PUBLIC_BASE_URL).
	env := func(kv map[string]string) func(string) string {
		return func(k string) string {
			if k == "PLATFORM_ENV" {
				return "development"
			}
			return kv[k]
		}
	}
	for _, tt := range []struct {
		env  map[string]string
		want string
		warn bool
	}{
		{map[string]string{}, "http://127.0.0.1:8080", false},
		{map[string]string{"PLATFORM_ADDR": "127.0.0.1:9191"}, "http://127.0.0.1:9191", false},
		{map[string]string{"PLATFORM_ADDR": ":9191"}, "http://localhost:9191", false},
		{map[string]string{"PLATFORM_ADDR": "[::1]:9191"}, "http://[::1]:9191", false},
		{map[string]string{"PLATFORM_ADDR": "127.0.0.1:9191", "PUBLIC_BASE_URL": "http://localhost:9191/"}, "http://localhost:9191", false},
		{map[string]string{"PLATFORM_ADDR": "127.0.0.1:9191", "PUBLIC_BASE_URL": "http://127.0.0.1:8080"}, "http://127.0.0.1:8080", true},
		{map[string]string{"PLATFORM_ADDR": "0.0.0.0:8080", "PUBLIC_BASE_URL": "https://pay.example.com"}, "https://pay.example.com", true},
	} {
		cfg, err := LoadConfig(env(tt.env))
		if err != nil {
			t.Fatal(err)
		}
		w := publicURLMismatch(cfg)
		if cfg.PublicBaseURL != tt.want || (w != "") != tt.warn {
			t.Errorf("%v: PUBLIC_BASE_URL %q (want %q), warning %q", tt.env, cfg.PublicBaseURL, tt.want, w)
		}
		if tt.warn && !strings.Contains(w, "PLATFORM_ADDR") {
			t.Errorf("the warning %q does not name PLATFORM_ADDR", w)
		}
	}
}
