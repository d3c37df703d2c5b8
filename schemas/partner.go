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
	ID         string    `json:"id" required:"true" format:"ksuid"`
	ProductKey string    `json:"productKey" required:"true"`
	Period     string    `json:"period" required:"true"`
	Amount     int64     `json:"amount" required:"true" description:"integer minor units (KZT)"`
	PaidAt     time.Time `json:"paidAt" required:"true"`
	EventID    string    `json:"eventId" required:"true" description:"the partner's id of the delivery"`
}

// Prize is the API shape of one podium entry.
type Prize struct {
	ID           string    `json:"id" required:"true" format:"ksuid"`
	TournamentID string    `json:"tournamentId" required:"true"`
	Place        int       `json:"place" required:"true" minimum:"1"`
	Amount       int64     `json:"amount" required:"true" description:"integer minor units (KZT)"`
	FinalizedAt  time.Time `json:"finalizedAt" required:"true"`
}

// Tournament is the API and event shape of a published tournament.
type Tournament struct {
	ID        string    `json:"id" required:"true" description:"the chess partner's tournament id"`
	StartsAt  time.Time `json:"startsAt" required:"true"`
	Format    string    `json:"format" required:"true"`
	PrizePool int64     `json:"prizePool" required:"true" description:"integer minor units (KZT)"`
	Entries   int       `json:"entries" required:"true" minimum:"0"`
	Capacity  int       `json:"capacity" required:"true" minimum:"1"`
}

// CertPayout is the API shape of a certification payout.
type CertPayout struct {
	ID                string    `json:"id" required:"true" format:"ksuid"`
	ArtifactVersionID string    `json:"artifactVersionId" required:"true"`
	Amount            int64     `json:"amount" required:"true" description:"integer minor units (KZT)"`
	CertifiedAt       time.Time `json:"certifiedAt" required:"true"`
	EventID           string    `json:"eventId" required:"true" description:"the partner's id of the delivery"`
}

// RoyaltyReceipt answers the rights webhook: the recorded royalty;
// Replayed is true when an earlier delivery of the same eventId recorded it
// (the body then is that record).
type RoyaltyReceipt struct {
	Replayed bool `json:"replayed" required:"true"`
	Royalty
}

// CertPayoutReceipt answers the cert webhook: the recorded payout; Replayed
// is true when an earlier delivery of the same eventId recorded it.
type CertPayoutReceipt struct {
	Replayed bool `json:"replayed" required:"true"`
	CertPayout
}

// TournamentReceipt answers a tournament publication: the stored
// tournament; Replayed is true when the same tournament, unchanged, was
// published before.
type TournamentReceipt struct {
	Tournament
	Replayed bool `json:"replayed" required:"true"`
	// Stale: the delivery's version is older than the stored one, which
	// the answer shows; nothing changed.
	Stale bool `json:"stale,omitempty"`
}

// PodiumEntry is one recorded podium entry as the partner is answered: the
// prize and the e-mail it belongs to.
type PodiumEntry struct {
	Prize
	Email string `json:"email" required:"true" format:"email"`
}

// PodiumReceipt answers a finalized tournament: the entries this delivery
// recorded and those recorded before; FinalizedAt is when the first of
// them was recorded.
type PodiumReceipt struct {
	TournamentID string        `json:"tournamentId" required:"true"`
	Recorded     []PodiumEntry `json:"recorded" required:"true" nullable:"false"`
	Replayed     []PodiumEntry `json:"replayed" required:"true" nullable:"false"`
	FinalizedAt  time.Time     `json:"finalizedAt" required:"true"`
}

// CountedPage is a page of the caller's partner records with the total
// number of records (decisions.md: `{ items, total, nextCursor }`).
type CountedPage[T any] struct {
	Page[T]
	Total int64 `json:"total" required:"true" minimum:"0"`
}

// UpcomingTournaments is the public schedule: tournaments accepting
// entries, soonest first.
type UpcomingTournaments struct {
	Items []Tournament `json:"items" required:"true" nullable:"false"`
}

// CertStats is the caller's certification statistics (decisions.md: the
// planet stats resource).
type CertStats struct {
	// TotalArtifacts counts distinct artifactVersionIds.
	TotalArtifacts int64 `json:"totalArtifacts" required:"true" minimum:"0" description:"distinct artifactVersionIds"`
	// VerifiedCount counts payouts.
	VerifiedCount int64 `json:"verifiedCount" required:"true" minimum:"0" description:"certification payouts"`
	// TrustWeight is verifiedCount / totalArtifacts, 0 when there are none,
	// rounded to 4 decimals.
	TrustWeight float64 `json:"trustWeight" required:"true" minimum:"0" description:"verifiedCount / totalArtifacts, 0 without artifacts, 4 decimals"`
}

// EarningsTotals are integer KZT minor units per rail; planet is the cert
// payouts.
type EarningsTotals struct {
	Rights int64 `json:"rights" required:"true" description:"integer minor units (KZT)"`
	Chess  int64 `json:"chess" required:"true" description:"integer minor units (KZT)"`
	Planet int64 `json:"planet" required:"true" description:"integer minor units (KZT)"`
	All    int64 `json:"all" required:"true" description:"integer minor units (KZT)"`
}

// SourceEarnings is one rail under its interface label; Last is the time of
// its newest record, null when none.
type SourceEarnings struct {
	Source string     `json:"source" required:"true" enum:"qright,cyberchess,planet"`
	Amount int64      `json:"amount" required:"true" description:"integer minor units (KZT)"`
	Count  int64      `json:"count" required:"true" minimum:"0"`
	Last   *time.Time `json:"last" required:"true" description:"the newest record; null when none"`
}

// Earnings is what the partner rails recorded for the caller: totals per
// rail and overall, and per source (qright, cyberchess, planet, always all
// three, in that order). Nothing here moves money.
type Earnings struct {
	Totals    EarningsTotals   `json:"totals" required:"true"`
	PerSource []SourceEarnings `json:"perSource" required:"true" nullable:"false" minItems:"3" maxItems:"3"`
}

// RoyaltyRecorded is the data of royalty.recorded. UserID is the account
// holding Email, verified, when the royalty was recorded (empty when none
// yet): the event reaches only that account's streams and webhooks.
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
