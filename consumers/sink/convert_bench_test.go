package sink

import (
	"fmt"
	"io"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// benchRecords is what the sink copies under the bench: one
// transfer.completed per transfer, a ledger.entry_added now and then.
func benchRecords(b *testing.B, n int) []*kgo.Record {
	b.Helper()
	now := time.Now()
	recs := make([]*kgo.Record, 0, n)
	for i := range n {
		id := schemas.NewID()
		env, err := schemas.New(schemas.TypeTransferCompleted, "wal_"+id, "usr_"+id, schemas.TransferCompleted{
			TxID: "tx_" + id, FromWallet: "wal_" + id, ToWallet: "wal_2" + id, AmountKzt: 1234, FeeKzt: 12,
			Description: "bench", TransactionID: "tx_" + id, FromWalletID: "wal_" + id, ToWalletID: "wal_2" + id,
			Memo: "bench", Currency: "KZT"}, now)
		if i%50 == 49 {
			amt := int64(1234)
			env, err = schemas.New(schemas.TypeLedgerEntryAdded, "entry-"+id, "", schemas.LedgerEntry{ID: "entry-" + id,
				Height: int64(i), Kind: "fiat:transfer", SourceID: "tx_" + id, AmountCents: &amt,
				Timestamp: now.UTC().Format("2006-01-02T15:04:05.000000Z")}, now)
		}
		if err != nil {
			b.Fatal(err)
		}
		rec, err := topics.Record(topics.EventsFiat, env)
		if err != nil {
			b.Fatal(err)
		}
		recs = append(recs, rec)
	}
	return recs
}

// BenchmarkConvert is the sink's work per batch of 100 events, before the
// insert (go test -run '^$' -bench Convert -benchmem ./consumers/sink).
func BenchmarkConvert(b *testing.B) {
	recs := benchRecords(b, 100)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		if rows, _ := Convert(recs, log); len(rows.Events) != len(recs) {
			b.Fatal(fmt.Sprint(len(rows.Events), " rows"))
		}
	}
}

// BenchmarkMayHoldPersonal is the cheap test on one transfer.completed.
func BenchmarkMayHoldPersonal(b *testing.B) {
	env, err := schemas.Read(benchRecords(b, 1)[0].Value)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		if mayHoldPersonal(env.Data) {
			b.Fatal("transfer.completed holds no personal data")
		}
	}
}

// reportCPU reports the process's CPU time per op beside ns/op: on a
// shared machine the wall clock counts other processes' turns too.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
