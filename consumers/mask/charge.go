package mask

import (
	"net/http"
	"time"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/budget"
	store "github.com/fintech/platform/storage/mask"
	"github.com/fintech/platform/topics"
)

// charge decides one charge against a mask (Decide in decide.go, the risk
// score in risk.go): it locks the mask and reads its recent history (Load).
type charge struct{ schemas.MaskCharge }

func (c *charge) Lock(b *batch) {
	b.lockIDs = append(b.lockIDs, c.MaskID)
	b.charged = append(b.charged, &c.MaskCharge)
}

func (c *charge) Decide(b *batch, cmd schemas.Envelope) (pipeline.Outcome, error) {
	ctx, tx, d := b.ctx, b.tx, &c.MaskCharge
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
