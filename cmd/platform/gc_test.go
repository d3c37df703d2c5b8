package main

import (
	"math"
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

// TestLimitEmbedded: `platform run` gets a soft memory limit unless
// MEMORY_LIMIT (0 = none) or GOMEMLIMIT sets one.
func TestLimitEmbedded(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	const none = int64(math.MaxInt64)
	for _, tt := range []struct {
		name string
		env  map[string]string
		want int64
	}{
		{"default", map[string]string{}, embeddedMemoryLimit},
		{"MEMORY_LIMIT none", map[string]string{"MEMORY_LIMIT": "0"}, none},
		{"GOMEMLIMIT", map[string]string{"GOMEMLIMIT": "1GiB"}, none},
	} {
		t.Run(tt.name, func(t *testing.T) {
			debug.SetMemoryLimit(none)
			limitEmbedded(func(k string) string { return tt.env[k] })
			if got := debug.SetMemoryLimit(-1); got != tt.want {
				t.Fatalf("memory limit %d, want %d", got, tt.want)
			}
		})
	}
}
