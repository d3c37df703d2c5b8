package fiat

import (
	"net/http"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/topics"
)

// donation debits the donor's own active KZT wallet by the amount (no fee;
// the pre-KYC caps of a transfer apply and the amount counts toward the
// month's outflow) and credits the campaign's platform-held wallet.
// Rejections (unknown or foreign wallet, inactive wallet, another currency,
// ended or unknown campaign, over a pre-KYC cap, insufficient balance)
// record nothing.
type donation struct{ schemas.CharityDonate }

// donations is the batch state of the donations: the campaigns, locked
// after every shared row, whose raised totals change in memory as donations
// apply (so each answer carries the total after it, and
// campaign.goal_reached fires for the one donation that first reaches the
// goal), and the donation rows.
type donations struct {
	want      set
	campaigns map[string]*store.Campaign
	dirty     map[string]bool
	rows      []store.Donation
}

func newDonations() *donations {
	return &donations{want: set{}, campaigns: map[string]*store.Campaign{}, dirty: map[string]bool{}}
}

func (p *donations) QueueReads(q *pgx.Batch) { store.QueueLockCampaigns(q, p.want.list(), p.campaigns) }

func (p *donations) QueueWrites(q *pgx.Batch, b *batch) {
	store.QueueInsertDonations(q, p.rows)
	store.QueueWriteCampaigns(q, dirtyRows(p.campaigns, p.dirty), b.now)
}

func (d *donation) Lock(b *batch) {
	b.want.wallets.add(d.WalletID)
	b.want.limits.add(d.DonorUserID)
	pipeline.PartOf[*donations](&b.parts, schemas.TypeCharityDonate).want.add(d.CampaignID)
}

func (d *donation) Decide(b *batch, _ schemas.Envelope) (pipeline.Outcome, error) {
	p := pipeline.PartOf[*donations](&b.parts, schemas.TypeCharityDonate)
	w, rej := b.ownWallet(d.WalletID, d.DonorUserID)
	if rej != nil {
		return *rej, nil
	}
	if w.Currency != "KZT" {
		return pipeline.Reject(http.StatusUnprocessableEntity, schemas.CodeValidationFailed, "some fields are missing or invalid",
			map[string]any{"fields": map[string]string{"walletId": "must be a KZT wallet"}}), nil
	}
	camp := p.campaigns[d.CampaignID]
	if camp == nil {
		// The gateway checked it; a forged command gets a final answer.
		return pipeline.Reject(http.StatusConflict, schemas.CodeCampaignNotActive, "no such campaign", nil), nil
	}
	if d.EndsAt != nil && !b.now.Before(*d.EndsAt) {
		return pipeline.Reject(http.StatusConflict, schemas.CodeCampaignNotActive, "the campaign has ended", nil), nil
	}
	lim := b.limitsOf(d.DonorUserID)
	if !b.h.caps.CapCheck(lim.KYCApproved, d.AmountKzt, lim.MonthOut, true) {
		return kycRejection(), nil
	}
	if w.Balance < d.AmountKzt {
		return pipeline.Reject(http.StatusBadRequest, schemas.CodeInsufficientBalance, "the balance does not cover the amount",
			map[string]any{"required": d.AmountKzt, "balance": w.Balance}), nil
	}
	b.move(w, -d.AmountKzt)
	b.spend(lim, d.AmountKzt)
	b.credit(d.CampaignWalletID, d.AmountKzt)
	before := camp.Raised
	camp.Raised += d.AmountKzt
	p.dirty[camp.ID] = true

	txID := b.newID("tx")
	b.txs = append(b.txs, store.Tx{ID: txID, Kind: "donation", Status: "completed", FromWallet: w.ID,
		ToWallet: d.CampaignWalletID, FromUser: w.UserID, ToUser: "campaign:" + d.CampaignID, Amount: d.AmountKzt,
		Currency: w.Currency, Memo: "donation to campaign " + d.CampaignID, RefID: d.DonationID, CreatedAt: b.now})
	b.audit = append(b.audit, store.AuditRow{ID: b.newID("audit"), Actor: w.UserID, Action: "donation", Subject: txID,
		Amount: d.AmountKzt, Currency: w.Currency, Detail: w.ID + " -> " + d.CampaignWalletID + " donation " + d.DonationID,
		CreatedAt: b.now})
	p.rows = append(p.rows, store.Donation{ID: d.DonationID, CampaignID: d.CampaignID, DonorUserID: w.UserID,
		WalletID: w.ID, AmountKzt: d.AmountKzt, Anonymous: d.Anonymous, Message: d.Message, TransactionID: txID,
		LedgerEntryID: d.LedgerEntryID, CreatedAt: b.now})

	o := pipeline.JSON(http.StatusCreated, schemas.DonationResult{DonationID: d.DonationID, LedgerEntryID: d.LedgerEntryID,
		TransactionID: txID, CampaignID: d.CampaignID, WalletID: d.WalletID, AmountKzt: d.AmountKzt, Anonymous: d.Anonymous,
		CampaignTotalKzt: camp.Raised, ThankYouURL: d.ThankYouURL, CreatedAt: b.now})
	ev := schemas.DonationReceived{DonationID: d.DonationID, CampaignID: d.CampaignID, Category: d.Category,
		AmountKzt: d.AmountKzt, Anonymous: d.Anonymous, TransactionID: txID, LedgerEntryID: d.LedgerEntryID,
		CampaignTotalKzt: camp.Raised, OrganizerUserID: d.ProposerUserID, CreatedAt: b.now}
	if !d.Anonymous {
		ev.DonorUserID = d.DonorUserID
	}
	b.emit(&o, topics.EventsCharity, schemas.TypeDonationReceived, d.CampaignID, d.DonorUserID, ev)
	if before < camp.Goal && camp.Raised >= camp.Goal {
		b.emit(&o, topics.EventsCharity, schemas.TypeCampaignGoalReached, d.CampaignID, d.DonorUserID,
			schemas.CampaignGoalReached{CampaignID: d.CampaignID, GoalKzt: camp.Goal, RaisedKzt: camp.Raised,
				DonationID: d.DonationID, OrganizerUserID: d.ProposerUserID, ReachedAt: b.now})
	}
	actor := d.DonorUserID
	if d.Anonymous {
		actor = schemas.AnonymousDonor
	}
	b.ledger(&o, schemas.LedgerAppend{EntryID: d.LedgerEntryID, Kind: schemas.LedgerKindDonation,
		SourceID: d.DonationID, ActorUserID: actor, AmountCents: ptr(d.AmountKzt), Currency: "KZT",
		Meta: map[string]any{"campaignId": d.CampaignID, "donationId": d.DonationID, "transactionId": txID,
			"anonymous": d.Anonymous}})
	return o, nil
}
