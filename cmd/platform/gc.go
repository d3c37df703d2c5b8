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

// embeddedMemoryLimit is the soft memory limit of `platform run` (the
// gateway, every consumer and the embedded broker in one process) unless
// MEMORY_LIMIT or GOMEMLIMIT sets one. Under GC_PERCENT's 200 alone its heap
// grew to about three times the live heap: 300-340 MB peak RSS in the bench
// with 75-100 MB live (the sink's columns, fetch buffers); under this limit
// the collector runs earlier once the heap nears it, 203 MB peak RSS (the
// binary's own pages included) at about the same CPU per transfer. The
// processes of a cluster deployment keep Go's default of no limit.
const embeddedMemoryLimit = 160 << 20

// limitEmbedded applies embeddedMemoryLimit unless MEMORY_LIMIT (0 = none)
// or GOMEMLIMIT is set.
func limitEmbedded(getenv func(string) string) {
	if getenv("MEMORY_LIMIT") == "" && getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(embeddedMemoryLimit)
	}
}
