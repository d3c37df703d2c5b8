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

// DonationResult is the 201 body of a donation (encoded by the fiat
// consumer, which applies donations).
type DonationResult struct {
	DonationID       string    `json:"donationId" required:"true" format:"ksuid"`
	LedgerEntryID    string    `json:"ledgerEntryId" required:"true" format:"ksuid" description:"the id of the donation's ledger entry"`
	TransactionID    string    `json:"transactionId" required:"true" format:"ksuid"`
	CampaignID       string    `json:"campaignId" required:"true" format:"ksuid"`
	WalletID         string    `json:"walletId" required:"true" format:"ksuid" description:"the donor's KZT wallet"`
	AmountKzt        int64     `json:"amountKzt" required:"true" description:"integer minor units"`
	Anonymous        bool      `json:"anonymous" required:"true"`
	CampaignTotalKzt int64     `json:"campaignTotalKzt" required:"true" description:"integer minor units: the campaign's total after this donation"`
	ThankYouURL      string    `json:"thankYouUrl" required:"true" format:"uri"`
	CreatedAt        time.Time `json:"createdAt" required:"true"`
}

// Campaign is the API shape of a campaign. RecentDonors is set only by the
// single read.
type Campaign struct {
	ID            string           `json:"id" required:"true" format:"ksuid"`
	Title         string           `json:"title" required:"true"`
	Description   string           `json:"description" required:"true"`
	Category      string           `json:"category" required:"true"`
	GoalKzt       int64            `json:"goalKzt" required:"true" description:"integer minor units"`
	Media         []string         `json:"media" required:"true" nullable:"false" maxItems:"10" description:"https URLs"`
	EndsAt        *time.Time       `json:"endsAt" required:"true"`
	Status        string           `json:"status" required:"true" enum:"pending,active,ended" description:"ended: an active campaign past its endsAt"`
	Pinned        bool             `json:"pinned" required:"true"`
	Featured      bool             `json:"featured" required:"true"`
	CreatedAt     time.Time        `json:"createdAt" required:"true"`
	ApprovedAt    *time.Time       `json:"approvedAt" required:"true"`
	GoalReachedAt *time.Time       `json:"goalReachedAt" required:"true"`
	Progress      CampaignProgress `json:"progress" required:"true"`
	RecentDonors  *[]CampaignDonor `json:"recentDonors,omitempty" description:"the last 10 donors who did not give anonymously (single read only)"`
}

// CampaignProgress is how far a campaign is.
type CampaignProgress struct {
	RaisedKzt int64 `json:"raisedKzt" required:"true" description:"integer minor units"`
	GoalKzt   int64 `json:"goalKzt" required:"true" description:"integer minor units"`
	// Percent is floor(raised * 100 / goal); it passes 100 when a campaign
	// raises more than its goal.
	Percent    int64 `json:"percent" required:"true" minimum:"0" description:"floor(raised * 100 / goal); passes 100 when the goal is exceeded"`
	DonorCount int64 `json:"donorCount" required:"true"`
}

// CampaignDonor is one recent donor of a campaign (never an anonymous one).
type CampaignDonor struct {
	Name      string    `json:"name" required:"true"`
	AmountKzt int64     `json:"amountKzt" required:"true" description:"integer minor units"`
	DonatedAt time.Time `json:"donatedAt" required:"true"`
}

// CampaignList is a page of approved campaigns with their total count.
type CampaignList struct {
	Items      []Campaign `json:"items" required:"true" nullable:"false"`
	Total      int64      `json:"total" required:"true" description:"campaigns matching the filters, every page"`
	NextCursor *string    `json:"nextCursor" required:"true"`
}

// CharityStats is the charity roll-up (GET /api/charity/stats), read from the
// ClickHouse copy of donation.received.
type CharityStats struct {
	TotalRaisedKzt int64             `json:"totalRaisedKzt" required:"true" description:"integer minor units"`
	DonorCount     int64             `json:"donorCount" required:"true" description:"distinct donors, anonymous ones included"`
	TopCategories  []CharityCategory `json:"topCategories" required:"true" nullable:"false"`
}

// CharityCategory is what a category raised.
type CharityCategory struct {
	Category  string `json:"category" required:"true"`
	RaisedKzt int64  `json:"raisedKzt" required:"true" description:"integer minor units"`
}

// CharityHealth is the answer of GET /api/charity/health.
type CharityHealth struct {
	Status          string `json:"status" required:"true" enum:"ok,degraded"`
	Database        string `json:"database" required:"true" enum:"ok,unreachable"`
	ActiveCampaigns int64  `json:"activeCampaigns" required:"true"`
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
