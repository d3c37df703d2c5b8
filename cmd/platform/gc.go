package main

import "runtime/debug"

// tuneGC applies GC_PERCENT and MEMORY_LIMIT unless the runtime's own GOGC
// and GOMEMLIMIT are set (they win, as Go documents them). Under load the
// process allocates per request and per record; with the default GOGC=100
// and a small live heap, the collector ran several times a second and took
// about a tenth of the CPU. A GC_PERCENT of -1 turns the collector off
// (then set MEMORY_LIMIT).
func tuneGC(cfg Config, getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(int(cfg.GCPercent))
	}
	if getenv("GOMEMLIMIT") == "" && cfg.MemoryLimit > 0 {
		debug.SetMemoryLimit(cfg.MemoryLimit)
	}
}
