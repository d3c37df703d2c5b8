package e2e

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

// TestTradeTransfersSurviveCrash kills the platform (SIGKILL) while 300
// transfers among 6 accounts are in flight, restarts it, and lets every
// client retry with its Idempotency-Key until it gets an answer. Each
// transfer is applied exactly once: every balance equals its top-up plus
// the accepted transfers in minus out, and the total is conserved.
func TestTradeTransfersSurviveCrash(t *testing.T) {
	p := harness.Start(t, harness.Options{Env: map[string]string{"COMMAND_TIMEOUT": "2s"}})
	const accounts, transfers = 6, 300
	l := newTradeLoad(t, p, "trade-crash", accounts, 50, transfers, 7, 10_000_000)
	client := &http.Client{Timeout: 10 * time.Second}
	var retried atomic.Int64
	var wg sync.WaitGroup
	var fired sync.WaitGroup
	fired.Add(transfers / 2)
	for i := range l.results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i < transfers/2 {
				defer fired.Done()
			} else {
				time.Sleep(time.Duration(i%50) * 10 * time.Millisecond)
			}
			l.send(client, i, fmt.Sprintf("crash-%d", i), time.Now().Add(90*time.Second), func() { retried.Add(1) })
		}()
	}
	fired.Wait()
	p.Kill()
	p.Restart()
	wg.Wait()

	_, total := l.check(t)
	t.Logf("%d retries across the crash; total conserved at %d units", retried.Load(), total)
}
