package reputation

import (
	"testing"
	"time"

	"github.com/fintech/platform/schemas"
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
	d := derivations()[schemas.TypeTransferCompleted]
	wallet := func(string) Wallet { return Wallet{Owner: "usr_2", Currency: "KZT"} }
	b.ReportAllocs()
	for b.Loop() {
		if evs := deriveOne(b, d, env, wallet); len(evs) != 2 {
			b.Fatalf("%d earnings, want 2", len(evs))
		}
	}
}

// deriveOne is what items does with one event: read it, then earn.
func deriveOne(b *testing.B, d derivation, env schemas.Envelope, wallet func(string) Wallet) []earning {
	r, err := d.read(env)
	if err != nil {
		b.Fatal(err)
	}
	return r.earn(wallet)
}
