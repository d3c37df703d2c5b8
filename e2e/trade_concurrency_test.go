package e2e

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// TestTradeConcurrentTransfers fires 1,000 concurrent transfers among 20
// accounts whose owners live on different partitions of trade.commands.
// A request answered 503 (the reply did not come in time) is retried with
// the same Idempotency-Key, as a client should. Afterwards:
//   - the total of the 20 balances is exactly what was topped up (an
//     integer sum of 10^-7 units): nothing created, nothing lost;
//   - every account's balance is exactly its top-up plus what the accepted
//     transfers brought in minus what they took out;
//   - most transfers were accepted (amounts are small against balances).
func TestTradeConcurrentTransfers(t *testing.T) {
	p := shared(t)
	const accounts, transfers = 20, 1000
	// 100 TNU each; transfers of 0.0000001 .. 1.9999999 TNU, up to 7 decimals.
	l := newTradeLoad(t, p, "trade-race", accounts, 100, transfers, 13, 2*10_000_000-1)
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: transfers}}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range l.results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("race-%d-%d", i, time.Now().UnixNano())
			<-start
			l.send(client, i, key, time.Now().Add(60*time.Second), func() {})
		}()
	}
	began := time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(began)

	accepted, total := l.check(t)
	if accepted < transfers*9/10 {
		t.Fatalf("only %d of %d transfers accepted", accepted, transfers)
	}
	t.Logf("%d of %d transfers accepted in %s (%.0f/s); total conserved at %d units", accepted, transfers,
		elapsed.Round(time.Millisecond), float64(transfers)/elapsed.Seconds(), total)
}
