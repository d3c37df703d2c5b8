package schemas

import (
	"errors"
	"strings"
	"time"
)

// Charity message types. Campaigns are written by the gateway directly (low
// rate, no balances) with their events in the outbox. A donation moves
// money, so it is a command on fiat.commands keyed by the donor's wallet id
// and is applied by the fiat consumer in its batch: the donor's wallet is
// debited (no fee), the campaign's platform-held wallet credited (one
// additive update per batch, it is a hot row) and the donation row written,
// all in the batch's transaction.
const (
	// TypeCharityDonate is a donation command on fiat.commands.
	TypeCharityDonate = "charity.donate"

	// Events of the charity module on events.charity, keyed by campaign id.
	TypeCampaignCreated     = "campaign.created"
	TypeCampaignApproved    = "campaign.approved"
	TypeDonationReceived    = "donation.received"
	TypeCampaignGoalReached = "campaign.goal_reached"
)

// charityVersions lists the charity module's message types and their schema versions.
var charityVersions = map[string]int{
	TypeCharityDonate:       1,
	TypeCampaignCreated:     1,
	TypeCampaignApproved:    1,
	TypeDonationReceived:    1,
	TypeCampaignGoalReached: 1,
}

// Campaign statuses. "ended" is never stored: it is how an active campaign
// past its endsAt is shown.
const (
	CampaignPending = "pending"
	CampaignActive  = "active"
	CampaignEnded   = "ended"
)

// Reputation kinds of the charity module (spec: "Reputation events emitted by
// other modules").
const (
	RepKindCharityDonor     = "charity-donor"     // +4 per donation, to the donor
	RepKindCharityOrganizer = "charity-organizer" // +2 on approval, to the proposer
)

// AnonymousDonor is the actor of the ledger entry of an anonymous donation:
// ledger reads are public, and anonymous donors never appear anywhere public.
const AnonymousDonor = "anonymous"

// CampaignWalletID is the platform-held KZT wallet of a campaign (created
// with the campaign; kind "campaign").
func CampaignWalletID(campaignID string) string { return "campaign-" + campaignID }

// CharityDonate is the data of a TypeCharityDonate command. The gateway
// assigns DonationID and LedgerEntryID (the id the ledger entry gets) and
// copies the campaign's immutable fields the consumer needs, so the consumer
// reads the campaign row only in its one additive update at the end of the
// batch.
type CharityDonate struct {
	DonationID       string     `json:"donationId"`
	LedgerEntryID    string     `json:"ledgerEntryId"`
	CampaignID       string     `json:"campaignId"`
	CampaignWalletID string     `json:"campaignWalletId"`
	Category         string     `json:"category"`
	GoalKzt          int64      `json:"goalKzt"`
	ProposerUserID   string     `json:"proposerUserId"`
	EndsAt           *time.Time `json:"endsAt,omitempty"`
	DonorUserID      string     `json:"donorUserId"`
	WalletID         string     `json:"walletId"`
	AmountKzt        int64      `json:"amountKzt"`
	Anonymous        bool       `json:"anonymous"`
	Message          string     `json:"message,omitempty"`
	ThankYouURL      string     `json:"thankYouUrl"`
}

// Validate checks what the consumer relies on.
func (d CharityDonate) Validate() error {
	var errs []error
	for name, v := range map[string]string{"donationId": d.DonationID, "ledgerEntryId": d.LedgerEntryID,
		"campaignId": d.CampaignID, "campaignWalletId": d.CampaignWalletID, "donorUserId": d.DonorUserID,
		"walletId": d.WalletID} {
		if strings.TrimSpace(v) == "" {
			errs = append(errs, errors.New(name+" is empty"))
		}
	}
	if d.AmountKzt <= 0 {
		errs = append(errs, errors.New("amountKzt must be positive"))
	}
	if d.GoalKzt <= 0 {
		errs = append(errs, errors.New("goalKzt must be positive"))
	}
	return errors.Join(errs...)
}

// DonationResult is the 201 body of a donation.
type DonationResult struct {
	DonationID       string    `json:"donationId"`
	LedgerEntryID    string    `json:"ledgerEntryId"`
	TransactionID    string    `json:"transactionId"`
	CampaignID       string    `json:"campaignId"`
	WalletID         string    `json:"walletId"`
	AmountKzt        int64     `json:"amountKzt"`
	Anonymous        bool      `json:"anonymous"`
	CampaignTotalKzt int64     `json:"campaignTotalKzt"`
	ThankYouURL      string    `json:"thankYouUrl"`
	CreatedAt        time.Time `json:"createdAt"`
}

// DonationReceived is the data of donation.received. DonorUserID is set only
// for a donation that is not anonymous; the donor is always the envelope's
// actor (for distinct-donor counts), which is not part of the delivered
// payload. OrganizerUserID makes the campaign's proposer a subject of the
// event for webhook subscriptions.
type DonationReceived struct {
	DonationID       string    `json:"donationId"`
	CampaignID       string    `json:"campaignId"`
	Category         string    `json:"category"`
	AmountKzt        int64     `json:"amountKzt"`
	Anonymous        bool      `json:"anonymous"`
	DonorUserID      string    `json:"donorUserId,omitempty"`
	TransactionID    string    `json:"transactionId"`
	LedgerEntryID    string    `json:"ledgerEntryId"`
	CampaignTotalKzt int64     `json:"campaignTotalKzt"`
	OrganizerUserID  string    `json:"organizerUserId"`
	CreatedAt        time.Time `json:"createdAt"`
}

// CampaignGoalReached is the data of campaign.goal_reached, emitted once per
// campaign, with the donation whose amount first brought the total to the goal.
type CampaignGoalReached struct {
	CampaignID      string    `json:"campaignId"`
	GoalKzt         int64     `json:"goalKzt"`
	RaisedKzt       int64     `json:"raisedKzt"`
	DonationID      string    `json:"donationId"`
	OrganizerUserID string    `json:"organizerUserId"`
	ReachedAt       time.Time `json:"reachedAt"`
}

// CampaignEvent is the data of campaign.created and campaign.approved.
type CampaignEvent struct {
	CampaignID     string    `json:"campaignId"`
	ProposerUserID string    `json:"proposerUserId"`
	Title          string    `json:"title"`
	Category       string    `json:"category"`
	GoalKzt        int64     `json:"goalKzt"`
	Status         string    `json:"status"`
	Pinned         bool      `json:"pinned"`
	Featured       bool      `json:"featured"`
	At             time.Time `json:"at"`
}
