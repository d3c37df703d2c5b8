package main

import (
	"log/slog"
	"net/http"
	"net/http/pprof"
	"runtime"
	"time"
)

// servePprof serves the Go profiler on addr (PPROF_ADDR), on its own mux so
// it is never reachable through the public API. It also turns on the block
// and mutex profiles (/debug/pprof/block, /debug/pprof/mutex: where the
// process waits rather than runs), sampled so their cost stays small: one
// blocking event per 10 µs blocked, one contended mutex in 10.
func servePprof(addr string, log *slog.Logger) {
	runtime.SetBlockProfileRate(10_000)
	runtime.SetMutexProfileFraction(10)
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	log.Info("pprof listening", "addr", addr)
	if err := srv.ListenAndServe(); err != nil {
		log.Warn("pprof stopped", "err", err)
	}
}
