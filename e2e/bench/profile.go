package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// profiler fetches Go profiles of the platform process from its PPROF_ADDR
// listener (loopback) while a platform run is under load: a CPU profile and
// an execution trace (where goroutines wait: syscalls such as the broker's
// fsyncs, the network, the scheduler), then the block and mutex profiles
// accumulated since start. Files land in dir as <label>.cpu.pprof,
// <label>.trace, <label>.block.pprof and <label>.mutex.pprof; read them with
// `go tool pprof -top bin/platform FILE` and `go tool trace FILE`.
type profiler struct {
	addr string
	dir  string
	bin  string // the profiled binary ("" when unknown: the profile's own symbols)
	wg   sync.WaitGroup
}

func newProfiler(addr, dir, bin string) (*profiler, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("profile dir: %w", err)
	}
	return &profiler{addr: addr, dir: dir, bin: bin}, nil
}

// start begins the CPU profile (for cpu) and, after it, a short trace,
// in the background; wait collects them.
func (p *profiler) start(label string, cpu time.Duration) {
	if p == nil {
		return
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		secs := max(int(cpu.Seconds()), 1)
		p.fetch(fmt.Sprintf("/debug/pprof/profile?seconds=%d", secs), label+".cpu.pprof", cpu+30*time.Second)
		p.fetch("/debug/pprof/trace?seconds=2", label+".trace", 60*time.Second)
	}()
}

// wait waits for the background fetches, then saves the block and mutex
// profiles; it returns the CPU profile's top 15 by cumulative time, also
// saved as <label>.top15.txt ("" when there is none).
func (p *profiler) wait(label string) string {
	if p == nil {
		return ""
	}
	p.wg.Wait()
	p.fetch("/debug/pprof/block", label+".block.pprof", 30*time.Second)
	p.fetch("/debug/pprof/mutex", label+".mutex.pprof", 30*time.Second)
	p.fetch("/debug/pprof/allocs", label+".allocs.pprof", 30*time.Second)
	fmt.Printf("  profiles: %s/%s.{cpu,block,mutex,allocs}.pprof and .trace\n", p.dir, label)
	top, err := p.top(label)
	if err != nil {
		fmt.Printf("  CPU profile top 15 by cum: n/a (%v)\n", err)
		return ""
	}
	fmt.Printf("  CPU profile top 15 by cum (%s/%s.top15.txt):\n", p.dir, label)
	for _, l := range strings.Split(strings.TrimRight(top, "\n"), "\n") {
		fmt.Println("    " + l)
	}
	return top
}

// top runs `go tool pprof -top -cum -nodecount=15` on the run's CPU profile
// and saves what it prints next to it.
func (p *profiler) top(label string) (string, error) {
	prof := filepath.Join(p.dir, label+".cpu.pprof")
	if _, err := os.Stat(prof); err != nil {
		return "", err
	}
	args := []string{"tool", "pprof", "-top", "-cum", "-nodecount=15"}
	if p.bin != "" {
		args = append(args, p.bin)
	}
	out, err := exec.Command(goTool(), append(args, prof)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go tool pprof: %v: %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(p.dir, label+".top15.txt"), out, 0o644); err != nil {
		return "", err
	}
	return string(out), nil
}

// goTool is the go command: $GO (the Makefile's), else the one on PATH,
// else the toolchain this bench was built with.
func goTool() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	if g, err := exec.LookPath("go"); err == nil {
		return g
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

func (p *profiler) fetch(path, name string, timeout time.Duration) {
	cl := &http.Client{Timeout: timeout}
	resp, err := cl.Get("http://" + p.addr + path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: profile %s: %v\n", path, err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		fmt.Fprintf(os.Stderr, "bench: profile %s: %s %s\n", path, resp.Status, b)
		return
	}
	f, err := os.Create(filepath.Join(p.dir, name))
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: profile %s: %v\n", path, err)
		return
	}
	defer f.Close()
	if _, err := io.Copy(f, resp.Body); err != nil {
		fmt.Fprintf(os.Stderr, "bench: profile %s: %v\n", path, err)
	}
}
