package main

import (
	"runtime/debug"
	"testing"
)

// TestTuneGC: GC_PERCENT (default 200) applies unless GOGC is set.
func TestTuneGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	tests := []struct {
		name string
		env  map[string]string
		want int
	}{
		{"default", map[string]string{}, 200},
		{"GC_PERCENT", map[string]string{"GC_PERCENT": "400"}, 400},
		{"GOGC wins", map[string]string{"GC_PERCENT": "400", "GOGC": "100"}, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"PLATFORM_ENV": "development", "JWT_SECRET": "0123456789abcdef0123456789abcdef", "DATA_DIR": t.TempDir()}
			for k, v := range tt.env {
				env[k] = v
			}
			cfg, err := LoadConfig(func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			debug.SetGCPercent(100)
			tuneGC(cfg, func(k string) string { return env[k] })
			if got := debug.SetGCPercent(100); got != tt.want {
				t.Fatalf("GC percent = %d, want %d", got, tt.want)
			}
		})
	}
}
