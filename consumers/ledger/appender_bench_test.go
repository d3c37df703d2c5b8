package ledger

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/schemas"
)

// BenchmarkAppend measures sustained appends/s of the appender group: b.N
// emissions are queued on ledger.append, then one appender chains them in
// batches (pipeline MaxBatch 1000) into Postgres.
//
//	go test ./consumers/ledger -run XXX -bench Append -benchtime 20000x
func BenchmarkAppend(b *testing.B) {
	e := newEnv(b)
	recs := make([]*kgo.Record, 0, b.N)
	for i := range b.N {
		recs = append(recs, appendRecord(b, schemas.LedgerKindTransfer, fmt.Sprintf("bench-%d", i), int64(i+1)))
	}
	for i := 0; i < len(recs); i += 5000 {
		e.publish(b, recs[i:min(i+5000, len(recs))]...)
	}
	b.ResetTimer()
	start := time.Now()
	stop := e.run(b, nil)
	e.waitHead(b, int64(b.N))
	elapsed := time.Since(start)
	b.StopTimer()
	_ = stop()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "appends/s")
}
