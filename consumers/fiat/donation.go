package fiat

import (
	"context"
	"net/http"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/topics"
)

// weightCharityDonor is the donor's reputation per donation (spec: Events).
const weightCharityDonor = 4

// donations is the batch state of the charity donation commands. A
// campaign's wallet and its raised total are hot rows (every donation to the
// campaign touches them): they are not locked with the donors' wallets but
// changed once per batch, at its very end, by one additive update each, so
// their row locks are held only until the commit. The answer of a donation
// (campaignTotalKzt) and campaign.goal_reached depend on the total that
// update returns, so donation outcomes are completed by finishDonations.
type donations struct {
	credits  map[string]int64 // campaign wallet id -> credits of the batch
	raised   map[string]int64 // campaign id -> donations of the batch
	rows     []store.Donation
	inFlight []pendingDonation
	active   bool
}

type pendingDonation struct {
	idx  int
	cmd  *schemas.CharityDonate
	txID string
}

// donate debits the donor's own active KZT wallet by the amount (no fee;
// the pre-KYC caps of a transfer apply and the amount counts toward the
// month's outflow) and queues the campaign's credit, the transaction, the
// audit row and the donation row. Rejections (unknown or foreign wallet, inactive wallet,
// another currency, ended campaign, over a pre-KYC cap, insufficient
// balance) record nothing.
func (b *batch) donate(idx int, d *schemas.CharityDonate) pipeline.Outcome {
	if err := d.Validate(); err != nil {
		return pipeline.Reject(http.StatusUnprocessableEntity, schemas.CodeValidationFailed, "the donation could not be read", nil)
	}
	w, rej := b.ownWallet(d.WalletID, d.DonorUserID)
	if rej != nil {
		return *rej
	}
	if w.Currency != "KZT" {
		return pipeline.Reject(http.StatusUnprocessableEntity, schemas.CodeValidationFailed, "some fields are missing or invalid",
			map[string]any{"fields": map[string]string{"walletId": "must be a KZT wallet"}})
	}
	if d.EndsAt != nil && !b.now.Before(*d.EndsAt) {
		return pipeline.Reject(http.StatusConflict, schemas.CodeCampaignNotActive, "the campaign has ended", nil)
	}
	lim := b.limitsOf(d.DonorUserID)
	if !b.h.caps.CapCheck(lim.KYCApproved, d.AmountKzt, lim.MonthOut, true) {
		return kycRejection()
	}
	if w.Balance < d.AmountKzt {
		return pipeline.Reject(http.StatusBadRequest, schemas.CodeInsufficientBalance, "the balance does not cover the amount",
			map[string]any{"required": d.AmountKzt, "balance": w.Balance})
	}
	if !b.donations.active {
		b.donations = donations{credits: map[string]int64{}, raised: map[string]int64{}, active: true}
	}
	b.move(w, -d.AmountKzt)
	lim.MonthOut += d.AmountKzt
	b.limDirty[lim.UserID] = true
	b.donations.credits[d.CampaignWalletID] += d.AmountKzt
	b.donations.raised[d.CampaignID] += d.AmountKzt

	txID := schemas.NewID()
	b.txs = append(b.txs, store.Tx{ID: txID, Kind: "donation", Status: "completed", FromWallet: w.ID,
		ToWallet: d.CampaignWalletID, FromUser: w.UserID, ToUser: "campaign:" + d.CampaignID, Amount: d.AmountKzt,
		Currency: w.Currency, Memo: "donation to campaign " + d.CampaignID, RefID: d.DonationID, CreatedAt: b.now})
	b.audit = append(b.audit, store.AuditRow{ID: schemas.NewID(), Actor: w.UserID, Action: "donation", Subject: txID,
		Amount: d.AmountKzt, Currency: w.Currency, Detail: w.ID + " -> " + d.CampaignWalletID + " donation " + d.DonationID,
		CreatedAt: b.now})
	b.donations.rows = append(b.donations.rows, store.Donation{ID: d.DonationID, CampaignID: d.CampaignID,
		DonorUserID: w.UserID, WalletID: w.ID, AmountKzt: d.AmountKzt, Anonymous: d.Anonymous, Message: d.Message,
		TransactionID: txID, LedgerEntryID: d.LedgerEntryID, CreatedAt: b.now})
	b.donations.inFlight = append(b.donations.inFlight, pendingDonation{idx: idx, cmd: d, txID: txID})
	// Completed by finishDonations once the campaign totals are known.
	return pipeline.Outcome{}
}

// donorReputationSource names the donor's charity-donor event of a
// campaign and day.
func donorReputationSource(campaignID string, now time.Time) string {
	return "donation:" + campaignID + ":" + now.UTC().Format(time.DateOnly)
}

// finishDonations runs after flush, last in the batch: it credits the
// campaign wallets and adds to the campaign totals (one additive update per
// hot row), inserts the donation rows, and completes each donation's
// outcome with the campaign total after it and its emissions: the ledger
// entry (with the id the gateway assigned), donation.received,
// charity-donor +4 to the donor (from the minimum, once a day per campaign),
// and campaign.goal_reached for the one
// donation that first brings a campaign to its goal.
func (b *batch) finishDonations(ctx context.Context, tx pgx.Tx, out []pipeline.Outcome) error {
	if len(b.donations.inFlight) == 0 {
		return nil
	}
	if err := store.InsertDonations(ctx, tx, b.donations.rows); err != nil {
		return err
	}
	if err := store.CreditWallets(ctx, tx, b.donations.credits); err != nil {
		return err
	}
	totals, err := store.AddCampaignTotals(ctx, tx, b.donations.raised, b.now)
	if err != nil {
		return err
	}
	running := make(map[string]int64, len(totals))
	for id, t := range totals {
		running[id] = t.Before
	}
	sort.SliceStable(b.donations.inFlight, func(i, j int) bool { return b.donations.inFlight[i].idx < b.donations.inFlight[j].idx })
	for _, p := range b.donations.inFlight {
		d := p.cmd
		before := running[d.CampaignID]
		after := before + d.AmountKzt
		running[d.CampaignID] = after
		o := pipeline.JSON(http.StatusCreated, schemas.DonationResult{DonationID: d.DonationID,
			LedgerEntryID: d.LedgerEntryID, TransactionID: p.txID, CampaignID: d.CampaignID, WalletID: d.WalletID,
			AmountKzt: d.AmountKzt, Anonymous: d.Anonymous, CampaignTotalKzt: after, ThankYouURL: d.ThankYouURL,
			CreatedAt: b.now})
		ev := schemas.DonationReceived{DonationID: d.DonationID, CampaignID: d.CampaignID, Category: d.Category,
			AmountKzt: d.AmountKzt, Anonymous: d.Anonymous, TransactionID: p.txID, LedgerEntryID: d.LedgerEntryID,
			CampaignTotalKzt: after, OrganizerUserID: d.ProposerUserID, CreatedAt: b.now}
		if !d.Anonymous {
			ev.DonorUserID = d.DonorUserID
		}
		b.emit(&o, topics.EventsCharity, schemas.TypeDonationReceived, d.CampaignID, d.DonorUserID, ev)
		if goal := totals[d.CampaignID].Goal; before < goal && after >= goal {
			b.emit(&o, topics.EventsCharity, schemas.TypeCampaignGoalReached, d.CampaignID, d.DonorUserID,
				schemas.CampaignGoalReached{CampaignID: d.CampaignID, GoalKzt: goal, RaisedKzt: after,
					DonationID: d.DonationID, OrganizerUserID: d.ProposerUserID, ReachedAt: b.now})
		}
		meta := map[string]any{"campaignId": d.CampaignID, "donationId": d.DonationID, "transactionId": p.txID,
			"anonymous": d.Anonymous}
		actor := d.DonorUserID
		if d.Anonymous {
			actor = schemas.AnonymousDonor
		}
		b.ledger(&o, schemas.LedgerAppend{EntryID: d.LedgerEntryID, Kind: schemas.LedgerKindDonation,
			SourceID: d.DonationID, ActorUserID: actor, AmountCents: ptr(d.AmountKzt), Currency: "KZT", Meta: meta})
		// Reputation only from DonationReputationMinKzt, and once per donor,
		// campaign and UTC day (the source id: the reputation consumer
		// applies a repeated one once), so that many small donations, or
		// many accounts, cannot buy reputation cheaply.
		if d.AmountKzt >= schemas.DonationReputationMinKzt {
			b.emit(&o, topics.ReputationCommands, schemas.TypeReputationEvent, d.DonorUserID, d.DonorUserID,
				schemas.ReputationEvent{UserID: d.DonorUserID, Kind: schemas.RepKindCharityDonor, SourceModule: "charity",
					Weight: weightCharityDonor, SourceID: donorReputationSource(d.CampaignID, b.now)})
		}
		out[p.idx] = o
	}
	return nil
}
