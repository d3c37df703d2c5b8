package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

// TestTradeTransfersSurviveCrash kills the platform (SIGKILL) while
// transfers among 6 accounts are in flight, restarts it, and lets every
// client retry with its Idempotency-Key until it gets an answer. Each
// transfer is applied exactly once: every balance equals its top-up plus
// the accepted transfers in minus out, and the total is conserved. The test
// also proves it exercised the crash: at least 80% of the transfers
// settled, and some request first sent before the restart (in flight at the
// kill, or refused while the process was down) was answered, after retries,
// by the restarted process.
func TestTradeTransfersSurviveCrash(t *testing.T) {
	p := harness.Start(t, harness.Options{Env: map[string]string{"COMMAND_TIMEOUT": "2s"}})
	const accounts, transfers = 6, 300
	l := newTradeLoad(t, p, "trade-crash", accounts, 50, transfers, 7, 10_000_000)
	// The kill comes once 50 requests of the second half's burst were
	// written to the server, answered or not: the batch that answers them
	// may come a moment later, so the kill does not wait for answers.
	var phase2 atomic.Bool
	var written atomic.Int64
	wrote := make(chan struct{})
	client := &http.Client{Timeout: 10 * time.Second, Transport: tracedTransport{func() {
		if phase2.Load() && written.Add(1) == 50 {
			close(wrote)
		}
	}}}
	var retried, crossed, inFlight atomic.Int64
	var killedAt, restartedAt atomic.Int64 // unix nanoseconds; 0 until then
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
				// The second half: a burst of 100 (in flight at the kill),
				// then 50 spread over a second (sent while it is down).
				fired.Wait()
				if i >= transfers/2+100 {
					time.Sleep(time.Duration(i%50) * 20 * time.Millisecond)
				}
			}
			begin := time.Now().UnixNano()
			var tries int64
			l.send(client, i, fmt.Sprintf("crash-%d", i), time.Now().Add(90*time.Second), func() { tries++; retried.Add(1) })
			k, r := killedAt.Load(), restartedAt.Load()
			if tries > 0 && r != 0 && begin < r && time.Now().UnixNano() > r && l.results[i].status == http.StatusCreated {
				crossed.Add(1)
				if begin < k {
					inFlight.Add(1)
				}
			}
		}()
	}
	fired.Wait()
	phase2.Store(true)
	select {
	case <-wrote:
	case <-time.After(60 * time.Second):
		t.Fatalf("the second half's requests were not written within 60 s")
	}
	killedAt.Store(time.Now().UnixNano())
	p.Kill()
	p.Restart()
	restartedAt.Store(time.Now().UnixNano())
	wg.Wait()

	accepted, total := l.check(t)
	t.Logf("%d of %d settled; %d retries; %d requests first sent before the restart were answered by the restarted process "+
		"(%d of them sent before the kill); total conserved at %d units",
		accepted, transfers, retried.Load(), crossed.Load(), inFlight.Load(), total)
	if accepted*100 < transfers*80 {
		t.Fatalf("only %d of %d transfers settled, want at least 80%%", accepted, transfers)
	}
	if crossed.Load() == 0 {
		t.Fatalf("no request sent before the restart was retried into the restarted process: the crash was not exercised")
	}
}

// tracedTransport calls wrote each time a request has been written to the
// server.
type tracedTransport struct{ wrote func() }

func (tt tracedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { tt.wrote() }}
	return http.DefaultTransport.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
}
