package reputation

import (
	"testing"
	"time"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// BenchmarkDeriveTransfer is the applier's work on one transfer.completed
// read from events.fiat, wallet lookups aside
// (go test -run '^$' -bench DeriveTransfer -benchmem ./consumers/reputation).
func BenchmarkDeriveTransfer(b *testing.B) {
	id := schemas.NewID()
	env, err := schemas.New(schemas.TypeTransferCompleted, "wal_"+id, "usr_1", schemas.TransferCompleted{
		TxID: "tx_" + id, FromWallet: "wal_" + id, ToWallet: "wal_2" + id, AmountKzt: 123400, FeeKzt: 12,
		Description: "bench", TransactionID: "tx_" + id, FromWalletID: "wal_" + id, ToWalletID: "wal_2" + id,
		Memo: "bench", Currency: "KZT"}, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	table := newTable()
	wallet := func(string) Wallet { return Wallet{Owner: "usr_2", Currency: "KZT"} }
	b.ReportAllocs()
	for b.Loop() {
		if evs := deriveOne(table, env, wallet); len(evs) != 2 {
			b.Fatalf("%d earnings, want 2", len(evs))
		}
	}
}

// deriveOne is what the applier does with one event: the table reads it,
// it notes its wallets on the batch, then earns.
func deriveOne(table *pipeline.Table[*batch], env schemas.Envelope, wallet func(string) Wallet) []earning {
	bt := &batch{}
	table.DecodeRecord(pipeline.Command{Env: env, Topic: topics.EventsFiat}).Lock(bt)
	if len(bt.derived) != 1 {
		return nil
	}
	return bt.derived[0].earn(wallet)
}
