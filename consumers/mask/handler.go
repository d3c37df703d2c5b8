// Package mask is the consumer of mask.commands: it issues and revokes
// virtual masks and decides charges against them. Every command of one mask
// arrives on one partition and is applied in order by one consumer, so a
// mask's balance is never raced: no double spend, no overdraft.
//
// Merchants never see real card data: there is no real PAN anywhere in the
// platform, only the mask's virtual PAN.
package mask

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/budget"
	store "github.com/fintech/platform/storage/mask"
	"github.com/fintech/platform/topics"
)

// Store is what the handler needs from storage, inside the batch transaction.
type Store interface {
	LockMasks(ctx context.Context, tx pgx.Tx, ids []string) (map[string]store.MaskRow, error)
	History(ctx context.Context, tx pgx.Tx, req store.HistoryRequest) (store.History, error)
	Save(ctx context.Context, tx pgx.Tx, ch store.Changes) error
}

var _ Store = (*store.Store)(nil)

// Windows of the risk factors that look back (decisions.md, Mask).
const (
	VelocityWindow      = 60 * time.Second
	RecentDeclineWindow = 10 * time.Minute
)

// RiskFlagWeight is the reputation weight of a mask-risk-flag event.
const RiskFlagWeight = -2

// sourceModule names this module in the records it emits.
const sourceModule = "mask"

// Handler applies mask commands.
type Handler struct {
	store Store
	now   func() time.Time
	pan   func() (string, error)
	table *pipeline.Table[*batch]
}

var _ pipeline.Handler = (*Handler)(nil)

// NewHandler builds the handler. now is the clock of the risk windows and
// the timestamps.
func NewHandler(st Store, now func() time.Time) (*Handler, error) {
	if st == nil || now == nil {
		return nil, errors.New("mask handler: nil dependency")
	}
	table, err := pipeline.NewTable("mask", nil, declarations()...)
	if err != nil {
		return nil, err
	}
	return &Handler{store: st, now: now, pan: NewVirtualPan, table: table}, nil
}

// NewVirtualPan returns "vmask-" followed by 32 hex characters from
// crypto/rand. Uniqueness is enforced by a unique index; a collision fails
// the batch, which is retried with new PANs.
func NewVirtualPan() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate virtual PAN: %w", err)
	}
	return "vmask-" + hex.EncodeToString(b[:]), nil
}

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

// batch is the working set of one Apply call.
type batch struct {
	// ctx and tx are the batch's transaction: a charge that flags a
	// merchant takes the flag's budget in it.
	ctx     context.Context
	tx      pgx.Tx
	h       *Handler
	now     time.Time
	lockIDs []string              // the masks the commands asked for (Lock)
	charged []*schemas.MaskCharge // the batch's charges, for the history read
	masks   map[string]*maskState
	hist    store.History
	charges []store.ChargeRow
}

// WritesRejection: a charge declined 402 is a declined charge row, which
// the risk score of the mask's later charges reads (recent_decline); re-
// applied after a restore, it is decided again and must decline again.
func (h *Handler) WritesRejection(status int) bool { return status == http.StatusPaymentRequired }

var _ pipeline.RejectionWriter = (*Handler)(nil)

// Apply decides the commands in partition order inside tx. Masks are locked
// and their history read once per batch; the changes are written once per
// batch (one update per mask however many charges it took).
func (h *Handler) Apply(ctx context.Context, tx pgx.Tx, cmds []pipeline.Command) ([]pipeline.Outcome, error) {
	b := &batch{ctx: ctx, tx: tx, h: h, now: h.now().UTC(), masks: map[string]*maskState{}}
	ds := h.table.DecodeAll(cmds)
	for _, d := range ds {
		d.Lock(b)
	}
	if err := b.load(ctx, tx); err != nil {
		return nil, err
	}
	// Passes decides them in order, or, re-applying commands after a
	// restore, reproduces their first outcomes (a re-applied command at its
	// first clock).
	now := b.now
	outcomes, err := pipeline.Passes(cmds, func(i int) (pipeline.Outcome, error) {
		b.now = cmds[i].Clock(now)
		o, err := ds[i].Decide(b, cmds[i].Env)
		o.DecidedAt = b.now
		return o, err
	})
	b.now = now
	if err != nil {
		return nil, err
	}
	if err := b.save(ctx, tx); err != nil {
		return nil, err
	}
	return outcomes, nil
}

// load locks the masks the batch touches and reads their history.
func (b *batch) load(ctx context.Context, tx pgx.Tx) error {
	if len(b.lockIDs) == 0 {
		return nil
	}
	rows, err := b.h.store.LockMasks(ctx, tx, dedupe(b.lockIDs))
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

func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

func (b *batch) issue(cmd schemas.Envelope, d schemas.MaskIssue) (pipeline.Outcome, error) {
	if _, exists := b.masks[d.MaskID]; exists {
		return pipeline.Reject(http.StatusConflict, schemas.CodeMaskExists, "a mask with this id exists", nil), nil
	}
	pan, err := b.h.pan()
	if err != nil {
		return pipeline.Outcome{}, err
	}
	row := store.MaskRow{
		ID: d.MaskID, UserID: d.UserID, Label: d.Label, Kind: d.Kind,
		LockedToMerchant: d.LockedToMerchant, LockedToCategory: d.LockedToCategory,
		Currency: d.Currency, SpendLimitCents: d.SpendLimitCents, RemainingCents: d.SpendLimitCents,
		VirtualPan: pan, Status: schemas.MaskStatusActive, ExpiresAt: d.ExpiresAt.UTC(), CreatedAt: b.now,
	}
	b.masks[d.MaskID] = &maskState{row: row, isNew: true, seen: map[string]bool{}, refs: map[string]store.ChargeRow{}}
	view := row.View(b.now)
	ev, err := b.event(cmd, schemas.TypeMaskCreated, d.MaskID, d.UserID, view)
	if err != nil {
		return pipeline.Outcome{}, err
	}
	out := pipeline.JSON(http.StatusCreated, view)
	out.Emit = []pipeline.Emission{{Topic: topics.EventsMask, Env: ev}}
	return out, nil
}

func notFound() pipeline.Outcome {
	return pipeline.Reject(http.StatusNotFound, schemas.CodeNotFound, "mask not found", nil)
}

// owned returns the mask when it exists and belongs to userID.
func (b *batch) owned(maskID, userID string) *maskState {
	st := b.masks[maskID]
	if st == nil || st.row.UserID != userID {
		return nil
	}
	return st
}

// revoke soft-revokes; revoking a revoked mask answers the same.
func (b *batch) revoke(d schemas.MaskRevoke) pipeline.Outcome {
	st := b.owned(d.MaskID, d.UserID)
	if st == nil {
		return notFound()
	}
	if st.row.Status != schemas.MaskStatusRevoked {
		now := b.now
		st.row.Status, st.row.RevokedAt, st.dirty = schemas.MaskStatusRevoked, &now, true
	}
	return pipeline.JSON(http.StatusOK, st.row.View(b.now))
}

func (b *batch) charge(cmd schemas.Envelope, d schemas.MaskCharge) (pipeline.Outcome, error) {
	ctx, tx := b.ctx, b.tx
	st := b.owned(d.MaskID, d.UserID)
	if st == nil {
		return notFound(), nil
	}
	// A replay of (maskId, paymentRef) whose command was not found by the
	// pipeline (e.g. its processed row expired) answers the first outcome.
	if prev, ok := st.refs[d.PaymentRef]; ok {
		return ChargeOutcome(prev, true), nil
	}
	if prev, ok := b.hist.Existing[store.Ref{MaskID: d.MaskID, PaymentRef: d.PaymentRef}]; ok {
		return ChargeOutcome(prev, true), nil
	}

	m := st.row
	dec := Decide(MaskState{
		Kind: m.Kind, Status: m.Status, LockedToMerchant: m.LockedToMerchant, LockedToCategory: m.LockedToCategory,
		SpendLimitCents: m.SpendLimitCents, RemainingCents: m.RemainingCents, Consumed: m.Consumed, ExpiresAt: m.ExpiresAt,
	}, History{
		RecentAuthorized: st.recentAuth,
		RecentDecline:    !st.lastDecline.IsZero() && st.lastDecline.After(b.now.Add(-RecentDeclineWindow)),
		MerchantSeen:     st.seen[d.Merchant] || b.hist.Seen[store.MerchantKey{MaskID: d.MaskID, Merchant: d.Merchant}],
	}, ChargeRequest{AmountCents: d.AmountCents, Merchant: d.Merchant, MerchantCategory: d.MerchantCategory}, b.now)

	row := store.ChargeRow{
		ID: derivedID(cmd, "charge"), MaskID: d.MaskID, UserID: d.UserID, PaymentRef: d.PaymentRef,
		AmountCents: d.AmountCents, Currency: m.Currency, Merchant: d.Merchant, MerchantCategory: d.MerchantCategory,
		MerchantUserID: d.MerchantUserID, RiskScore: dec.Score, RiskFactors: dec.Factors, CreatedAt: b.now,
	}
	if dec.Authorized {
		row.Status = schemas.ChargeAuthorized
		st.row.RemainingCents -= d.AmountCents
		if m.Kind == schemas.MaskKindSingleUse {
			st.row.Consumed = true
		}
		st.dirty = true
		st.recentAuth++
		st.seen[d.Merchant] = true
	} else {
		row.Status, row.DeclineReason = schemas.ChargeDeclined, dec.Reason
		st.lastDecline = b.now
	}
	row.RemainingCents = st.row.RemainingCents
	st.refs[d.PaymentRef] = row
	b.charges = append(b.charges, row)

	out := ChargeOutcome(row, false)
	flag := dec.Flag
	if flag && d.MerchantUserID != "" && d.MerchantUserID != d.UserID && b.hist.ActiveMerchants[d.MerchantUserID] {
		// Once per (mask owner, merchant, day) is the account budget (the
		// source id also makes the reputation consumer apply repeats once),
		// but free sign-ups multiply owners: each flag is also charged to
		// the client IP of the charge (and counted globally, an alarm that
		// never refuses). A flag the IP budget keeps from the merchant's
		// reputation is held for review (mask_held_risk_flags), never
		// dropped silently; the charge is never affected.
		start, _ := schemas.BudgetMaskRiskFlag.Window(b.now)
		spent, ok, err := budget.Take(ctx, tx, start,
			budget.Charges(schemas.BudgetMaskRiskFlag, d.UserID+">"+d.MerchantUserID, d.ClientIP))
		if err != nil {
			return pipeline.Outcome{}, err
		}
		if !ok && spent.Scope != budget.ScopeAccount {
			if err := store.HoldRiskFlag(ctx, tx, store.HeldFlag{ChargeID: row.ID, MaskOwner: d.UserID,
				MerchantUserID: d.MerchantUserID, ClientIP: d.ClientIP, RiskScore: row.RiskScore, Reason: spent.Scope,
				CreatedAt: b.now}); err != nil {
				return pipeline.Outcome{}, err
			}
		}
		flag = ok
	}
	emit, err := b.chargeEmissions(cmd, row, flag)
	if err != nil {
		return pipeline.Outcome{}, err
	}
	out.Emit = emit
	return out, nil
}

// chargeEmissions builds what a decided charge emits: its event; for an
// authorized charge the ledger mask-charge entry; for a score at or above
// FlagScore with a known merchant user, the mask-risk-flag reputation event.
func (b *batch) chargeEmissions(cmd schemas.Envelope, c store.ChargeRow, flag bool) ([]pipeline.Emission, error) {
	typ := schemas.TypeChargeDeclined
	if c.Status == schemas.ChargeAuthorized {
		typ = schemas.TypeChargeAuthorized
	}
	ev, err := b.event(cmd, typ, c.MaskID, c.UserID, c.View())
	if err != nil {
		return nil, err
	}
	out := []pipeline.Emission{{Topic: topics.EventsMask, Env: ev}}
	if c.Status == schemas.ChargeAuthorized {
		amount := c.AmountCents
		entry, err := b.event(cmd, schemas.TypeLedgerAppend, "", c.UserID, schemas.LedgerAppend{
			Kind: schemas.LedgerKindMaskCharge, SourceID: c.ID, ActorUserID: c.UserID,
			AmountCents: &amount, Currency: c.Currency,
			Meta: map[string]any{"maskId": c.MaskID, "paymentRef": c.PaymentRef,
				"merchant": c.Merchant, "merchantCategory": c.MerchantCategory},
		})
		if err != nil {
			return nil, err
		}
		out = append(out, pipeline.Emission{Topic: topics.LedgerAppend, Env: entry})
	}
	// Only a user holding an active merchant key can be flagged, and at most
	// once per (mask owner, merchant) and UTC day: the source id makes the
	// reputation consumer apply repeats once, so a mask owner cannot grief
	// an arbitrary user by naming them on risky charges.
	if flag && c.MerchantUserID != "" && c.MerchantUserID != c.UserID && b.hist.ActiveMerchants[c.MerchantUserID] {
		rep, err := b.event(cmd, schemas.TypeReputationEvent, c.MerchantUserID, c.UserID, schemas.ReputationEvent{
			UserID: c.MerchantUserID, Kind: schemas.RepKindMaskRiskFlag, SourceModule: sourceModule,
			Weight: RiskFlagWeight, SourceID: "risk-flag:" + c.UserID + ":" + b.now.Format(time.DateOnly),
			Meta: map[string]any{"maskId": c.MaskID, "chargeId": c.ID, "riskScore": c.RiskScore, "status": c.Status},
		})
		if err != nil {
			return nil, err
		}
		out = append(out, pipeline.Emission{Topic: topics.ReputationCommands, Env: rep})
	}
	return out, nil
}

func (b *batch) event(cmd schemas.Envelope, typ, key, actor string, data any) (schemas.Envelope, error) {
	env, err := schemas.New(typ, key, actor, data, b.now)
	if err != nil {
		return schemas.Envelope{}, err
	}
	env.ID = derivedID(cmd, "event:"+typ)
	env.CorrelationID = cmd.CorrelationID
	return env, nil
}

// derivedID is the id cmd mints for purpose (schemas.DerivedID): applied
// again after a restore, a command writes the charge, the ledger source and
// the events it wrote the first time, and the ledger, the reputation
// consumer, webhooks and analytics deduplicate them.
func derivedID(cmd schemas.Envelope, purpose string) string {
	return schemas.DerivedID(cmd.ID, purpose, cmd.OccurredAt)
}

// ChargeOutcome is the answer for a charge: 201 with the charge when
// authorized, 402 charge_declined with declineReason, riskScore and the
// charge when declined. A replay (replayed true) answers 200 instead of 201
// and carries idempotent: true; a declined replay stays 402.
func ChargeOutcome(c store.ChargeRow, replayed bool) pipeline.Outcome {
	view := c.View()
	view.Idempotent = replayed
	if c.Status == schemas.ChargeAuthorized {
		status := http.StatusCreated
		if replayed {
			status = http.StatusOK
		}
		return pipeline.JSON(status, view)
	}
	return pipeline.JSON(http.StatusPaymentRequired, schemas.MaskChargeDeclined{
		Error: schemas.CodeChargeDeclined, Message: "the charge was declined: " + c.DeclineReason,
		DeclineReason: c.DeclineReason, RiskScore: c.RiskScore, RiskFactors: view.RiskFactors,
		Idempotent: replayed, Charge: view,
	})
}

func (b *batch) save(ctx context.Context, tx pgx.Tx) error {
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
