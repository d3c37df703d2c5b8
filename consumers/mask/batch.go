package mask

import (
	"context"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/mask"
)

var _ pipeline.TxBatch = (*batch)(nil)

// maskState is one mask as the batch changes it.
type maskState struct {
	row         store.MaskRow
	isNew       bool
	dirty       bool
	recentAuth  int
	lastDecline time.Time
	seen        map[string]bool
	refs        map[string]store.ChargeRow
}

// batch is the working set of one Apply call: the framework drives it
// (pipeline.ApplyInTx).
type batch struct {
	// ctx and tx are the batch's transaction: a charge that flags a
	// merchant takes the flag's budget in it.
	ctx     context.Context
	tx      pgx.Tx
	h       *Handler
	base    time.Time             // the clock of the batch (Stamp)
	now     time.Time             // the clock of the command being decided (At)
	lockIDs []string              // the masks the commands asked for (Lock)
	charged []*schemas.MaskCharge // the batch's charges, for the history read
	masks   map[string]*maskState
	hist    store.History
	charges []store.ChargeRow
}

// Stamp: every command of a batch is decided at the batch's clock.
func (b *batch) Stamp(int) time.Time { return b.base }

// At sets the clock the command is decided at (a re-applied command's is
// its first).
func (b *batch) At(now time.Time, _ schemas.Envelope) { b.now = now }

// Load locks the masks the batch touches and reads their history.
func (b *batch) Load(ctx context.Context, tx pgx.Tx) error {
	if len(b.lockIDs) == 0 {
		return nil
	}
	rows, err := b.h.store.LockMasks(ctx, tx, slices.Compact(slices.Sorted(slices.Values(b.lockIDs))))
	if err != nil {
		return err
	}
	req := store.HistoryRequest{
		VelocitySince: b.now.Add(-VelocityWindow),
		DeclineSince:  b.now.Add(-RecentDeclineWindow),
	}
	for id, r := range rows {
		b.masks[id] = &maskState{row: r, seen: map[string]bool{}, refs: map[string]store.ChargeRow{}}
		req.MaskIDs = append(req.MaskIDs, id)
	}
	seenPair := map[store.MerchantKey]bool{}
	for _, c := range b.charged {
		st := b.masks[c.MaskID]
		if st == nil {
			continue
		}
		req.Refs = append(req.Refs, store.Ref{MaskID: c.MaskID, PaymentRef: c.PaymentRef})
		if c.MerchantUserID != "" {
			req.MerchantUsers = append(req.MerchantUsers, c.MerchantUserID)
		}
		k := store.MerchantKey{MaskID: c.MaskID, Merchant: c.Merchant}
		if st.row.Kind == schemas.MaskKindRecurring && !seenPair[k] {
			seenPair[k] = true
			req.Merchants = append(req.Merchants, k)
		}
	}
	hist, err := b.h.store.History(ctx, tx, req)
	if err != nil {
		return err
	}
	b.hist = hist
	for id, st := range b.masks {
		st.recentAuth = hist.RecentAuthorized[id]
		st.lastDecline = hist.LastDecline[id]
	}
	return nil
}

// Save writes the new and changed masks and the batch's charges, once per
// batch (one update per mask however many charges it took).
func (b *batch) Save(ctx context.Context, tx pgx.Tx) error {
	var ch store.Changes
	for _, st := range b.masks {
		switch {
		case st.isNew:
			ch.NewMasks = append(ch.NewMasks, st.row)
		case st.dirty:
			ch.Updated = append(ch.Updated, st.row)
		}
	}
	ch.Charges = b.charges
	return b.h.store.Save(ctx, tx, ch)
}
