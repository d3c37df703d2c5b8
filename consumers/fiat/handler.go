// Package fiat is the fiat-applier consumer: it applies the commands of
// fiat.commands (transfers, deposits, withdrawals, payouts, merchant
// charges, payment requests, donations, refunds) to the wallets in batches.
//
// Each command type is one declaration (pipeline.Declare, its type in its
// own file): how it is read, the rows it locks, how it is decided in
// memory, the rows it writes, its reply and its events. A batch is applied in two round trips
// to Postgres: the reads (BEGIN, the runner's "applied before?" lookup, and
// every lock the batch's commands asked for, one statement per table in id
// order) and then the writes (final balances, new rows, the runner's
// processed rows and event log row, COMMIT). The cost per command is a few
// microseconds of Go, not round trips; the hot fee and campaign wallets are
// credited once per batch, last.
package fiat

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/topics"
)

// declarations lists every command type the applier reads on
// fiat.commands. Adding a command type is its file and one line here.
func declarations() []pipeline.Declaration[*batch] {
	return []pipeline.Declaration[*batch]{
		pipeline.Declare[*batch, transfer](schemas.TypeFiatTransfer),
		pipeline.Declare[*batch, depositCreate](schemas.TypeFiatDepositCreate),
		pipeline.Declare[*batch, depositCredit](schemas.TypeFiatDepositCredit),
		pipeline.Declare[*batch, depositReview](schemas.TypeFiatDepositReview),
		pipeline.Declare[*batch, withdraw](schemas.TypeFiatWithdraw),
		pipeline.Declare[*batch, payoutRequest](schemas.TypeFiatPayoutRequest),
		pipeline.Declare[*batch, payoutDecide](schemas.TypeFiatPayoutDecide),
		pipeline.Declare[*batch, merchantCharge](schemas.TypeFiatMerchantCharge),
		pipeline.Declare[*batch, requestPay](schemas.TypeFiatRequestPay),
		pipeline.DeclareWithPart[*batch, refund](schemas.TypeFiatRefund, newRefunds),
		pipeline.DeclareWithPart[*batch, donation](schemas.TypeCharityDonate, newDonations),
	}
}

// Handler applies fiat commands.
type Handler struct {
	caps  schemas.FiatCaps
	now   func() time.Time
	log   *slog.Logger
	table *pipeline.Table[*batch]

	// lastStamp is the stamp of the last command decided: a batch that
	// overlapped the one before it (its Load ran first) still stamps its
	// commands after that one's.
	stampMu   sync.Mutex
	lastStamp time.Time
}

var (
	_ pipeline.Pipelined = (*Handler)(nil)
	_ pipeline.Recorder  = (*Handler)(nil)
)

// NewHandler builds the handler.
func NewHandler(caps schemas.FiatCaps, now func() time.Time, log *slog.Logger) (*Handler, error) {
	if now == nil || log == nil {
		return nil, errors.New("fiat handler: nil dependency")
	}
	if caps.PerTransfer <= 0 || caps.DailyDeposit <= 0 || caps.Monthly <= 0 {
		return nil, errors.New("fiat handler: caps must be positive")
	}
	log = log.With("component", "fiat-applier")
	table, err := pipeline.NewTable("fiat", topics.FiatCommands, log, declarations()...)
	if err != nil {
		return nil, err
	}
	return &Handler{caps: caps, now: now, log: log, table: table}, nil
}

// Types lists the command types the handler applies, in declaration order.
func (h *Handler) Types() []string { return h.table.Types() }

// Load decodes every command of the batch (applied before or not: locking
// the rows of one applied before is harmless) and queues on reads the locks
// and reads they need (pipeline.LoadQueued). It never declines a batch:
// every fiat command takes this path.
func (h *Handler) Load(cmds []pipeline.Command, reads *pgx.Batch) pipeline.Loaded {
	return pipeline.LoadQueued(h.table, newBatch(h, h.now().UTC().Truncate(time.Microsecond)), cmds, reads)
}

// stamps reserves n consecutive microsecond stamps from now, or from just
// after the last one handed out when that is later, and returns the first.
func (h *Handler) stamps(now time.Time, n int) time.Time {
	h.stampMu.Lock()
	defer h.stampMu.Unlock()
	if !now.After(h.lastStamp) {
		now = h.lastStamp.Add(time.Microsecond)
	}
	if n > 0 {
		h.lastStamp = now.Add(time.Duration(n-1) * time.Microsecond)
	}
	return now
}

// Apply applies the batch in tx with the same declarations: the reads Load
// queues, then the writes Decide queues, one round trip each.
func (h *Handler) Apply(ctx context.Context, tx pgx.Tx, cmds []pipeline.Command) ([]pipeline.Outcome, error) {
	return pipeline.ApplyQueued(ctx, tx, h.table, newBatch(h, h.now().UTC().Truncate(time.Microsecond)), cmds)
}

// RecordedSQL finds committed transfers: their transaction row is their
// record (ref_id is the command id), and the reply is rebuilt from it
// exactly as it was sent. Rejected transfers and every other command keep
// a processed row.
func (h *Handler) RecordedSQL() string { return store.TransferRecordsSQL }

// Recorded rebuilds a committed transfer's reply from its record.
func (h *Handler) Recorded(record string) (int, []byte, error) {
	r, err := store.ParseTransferRecord(record)
	if err != nil {
		return 0, nil, err
	}
	o := transferReply(r.TransactionID, r.Currency, r.Fee, r.FromBalance, r.ToBalance, r.CreatedAt)
	return o.Status, o.Body, nil
}

// kycRejection is the answer to a command beyond the pre-KYC caps.
func kycRejection() pipeline.Outcome {
	return pipeline.Reject(http.StatusForbidden, schemas.CodeKYCRequired,
		"this exceeds the limits for accounts without KYC; submit KYC at /api/fiat/kyc/submit", nil)
}

func ptr(v int64) *int64 { return &v }
