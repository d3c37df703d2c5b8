package harness

import (
	"fmt"
	"os"
	"sync"
)

// ProcessTB is a TB for resources shared by a whole test process: Fatalf
// cleans up and exits, and Close runs the cleanups (call it after m.Run).
type ProcessTB struct {
	mu       sync.Mutex
	cleanups []func()
	dirs     []string
}

// NewProcessTB returns an empty ProcessTB.
func NewProcessTB() *ProcessTB { return &ProcessTB{} }

// Helper does nothing.
func (p *ProcessTB) Helper() {}

// Cleanup registers f to run at Close, last registered first.
func (p *ProcessTB) Cleanup(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cleanups = append(p.cleanups, f)
}

// TempDir creates a directory removed at Close.
func (p *ProcessTB) TempDir() string {
	d, err := os.MkdirTemp("", "e2e")
	if err != nil {
		p.Fatalf("temp dir: %v", err)
	}
	p.Cleanup(func() { _ = os.RemoveAll(d) })
	return d
}

// Fatalf prints the message, cleans up and exits the test process.
func (p *ProcessTB) Fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "e2e setup failed: "+format+"\n", args...)
	p.Close()
	os.Exit(1)
}

// Close runs the cleanups.
func (p *ProcessTB) Close() {
	p.mu.Lock()
	fs := p.cleanups
	p.cleanups = nil
	p.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}
