package schemas

import "time"

// Partner rail event types on events.partner, keyed by the lower-cased
// e-mail the record belongs to (a tournament by its id). The partners
// (rights, chess, cert) report through signed webhooks; the gateway records
// each report and queues its event in the same transaction. Nothing moves
// money: amounts are integer KZT minor units counted as earnings.
const (
	// TypeRoyaltyRecorded is a royalty first recorded for an e-mail.
	TypeRoyaltyRecorded = "royalty.recorded"
	// TypePrizeRecorded is one podium entry of a finalized tournament.
	TypePrizeRecorded = "prize.recorded"
	// TypeCertPayoutRecorded is a certification payout first recorded.
	TypeCertPayoutRecorded = "cert.payout.recorded"
	// TypeTournamentPublished is a tournament published or changed by the
	// chess partner.
	TypeTournamentPublished = "tournament.published"
)

// partnerVersions lists the partner rails' message types and their schema versions.
var partnerVersions = map[string]int{
	TypeRoyaltyRecorded:     1,
	TypePrizeRecorded:       1,
	TypeCertPayoutRecorded:  1,
	TypeTournamentPublished: 1,
}

// Source labels of GET /api/ecosystem/earnings (spec: "as the interface
// gives them"); planet is the cert payouts.
const (
	SourceRights = "qright"
	SourceChess  = "cyberchess"
	SourceCert   = "planet"
)

// Royalty is the API shape of a royalty (spec: Royalty, prize,
// certification payout).
type Royalty struct {
	ID         string    `json:"id"`
	ProductKey string    `json:"productKey"`
	Period     string    `json:"period"`
	Amount     int64     `json:"amount"`
	PaidAt     time.Time `json:"paidAt"`
	EventID    string    `json:"eventId"`
}

// Prize is the API shape of one podium entry.
type Prize struct {
	ID           string    `json:"id"`
	TournamentID string    `json:"tournamentId"`
	Place        int       `json:"place"`
	Amount       int64     `json:"amount"`
	FinalizedAt  time.Time `json:"finalizedAt"`
}

// Tournament is the API and event shape of a published tournament.
type Tournament struct {
	ID        string    `json:"id"`
	StartsAt  time.Time `json:"startsAt"`
	Format    string    `json:"format"`
	PrizePool int64     `json:"prizePool"`
	Entries   int       `json:"entries"`
	Capacity  int       `json:"capacity"`
}

// CertPayout is the API shape of a certification payout.
type CertPayout struct {
	ID                string    `json:"id"`
	ArtifactVersionID string    `json:"artifactVersionId"`
	Amount            int64     `json:"amount"`
	CertifiedAt       time.Time `json:"certifiedAt"`
	EventID           string    `json:"eventId"`
}

// RoyaltyRecorded is the data of royalty.recorded. UserID is the account
// holding Email when the royalty was recorded (empty when none yet).
type RoyaltyRecorded struct {
	Royalty
	Email  string `json:"email"`
	UserID string `json:"userId,omitempty"`
}

// PrizeRecorded is the data of prize.recorded.
type PrizeRecorded struct {
	Prize
	Email  string `json:"email"`
	UserID string `json:"userId,omitempty"`
}

// CertPayoutRecorded is the data of cert.payout.recorded.
type CertPayoutRecorded struct {
	CertPayout
	Email  string `json:"email"`
	UserID string `json:"userId,omitempty"`
}
