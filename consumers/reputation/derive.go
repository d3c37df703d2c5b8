package reputation

import (
	"time"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
)

// The reputation the money path earns (spec: "Reputation events emitted by
// other modules") is derived here from the events those operations publish
// anyway: the applier reads events.fiat and events.charity beside
// reputation.commands, so a transfer costs one event record instead of an
// event plus a command per party. Each derived event keeps the source id the
// fiat applier used to put on its commands, so the unique (user, kind,
// source) applies it once, however often the event is read and whichever
// path brought it (money movements: per user, kind and day, see
// derivations). Modules whose triggers have no event of their own (mask
// risk flags, governance, campaign approval) still send commands.
const (
	weightWalletActive  = 1
	weightWalletDeposit = 2
	weightWalletPayout  = 3
	weightCharityDonor  = 4
)

// Wallet is what the rules need of a wallet: its owner and its currency
// (neither ever changes).
type Wallet struct{ Owner, Currency string }

// earning is one reputation event a rule derives. Before is the source id
// the rule gave the same credit under before it counted once a day (one per
// transaction): an event already credited under it, read again after the
// upgrade, earns nothing more.
type earning struct {
	schemas.ReputationEvent
	Before string
}

// deriving is what every event record that earns reputation shares: its
// envelope (the rules read its actor and its time, before the batch loads:
// pipeline.Enveloped) and what it earns once the batch has read the wallets
// its rule needs (batch.Load).
type deriving struct {
	env    schemas.Envelope
	earned []earning
}

func (d *deriving) Bind(env schemas.Envelope) { d.env = env }

// Decide applies what the record earned, each with the once-per-source
// rule, and emits their score updates; the table answers the record 200
// with no body (pipeline.DeclareEvent).
func (d *deriving) Decide(b *batch, env schemas.Envelope) (pipeline.Outcome, error) {
	var o pipeline.Outcome
	for _, e := range d.earned {
		c, err := b.credit(e.ReputationEvent, nil, e.Before, env)
		if err != nil {
			return pipeline.Outcome{}, err
		}
		o.Emit = append(o.Emit, c.emit...)
	}
	return o, nil
}

// The rules: one type per event type that earns reputation, declared in
// declarations() (applier.go), each with the wallets it needs (Lock) and
// what it earns (earn).
//
// Money movements (transfers, paid requests, deposits, payouts) earn only
// from schemas.MoneyEarnsReputation (10 KZT, 1 USD) and at most once per
// user, kind and UTC day of the event: their source id is the day
// (DaySource), so the unique (user, kind, source) that makes a redelivery
// a no-op also makes the second movement of the day one. A transfer and a
// paid request are both wallet-active: together they earn +1 a day a side.

// transferCompleted: wallet-active to both parties.
type transferCompleted struct {
	schemas.TransferCompleted
	deriving
}

func (e *transferCompleted) Lock(b *batch) { b.derive(&e.deriving, e.earn, e.ToWallet) }

func (e *transferCompleted) earn(wallet func(string) Wallet) []earning {
	to := wallet(e.ToWallet) // both wallets hold one currency
	if !schemas.MoneyEarnsReputation(e.AmountKzt, to.Currency) {
		return nil
	}
	return bothParties(e.env, e.env.ActorUserID, to.Owner, e.TxID)
}

// requestPaid: wallet-active to the payer and to the requester.
type requestPaid struct {
	schemas.RequestPaid
	deriving
}

func (e *requestPaid) Lock(b *batch) { b.derive(&e.deriving, e.earn, e.PayerWalletID) }

func (e *requestPaid) earn(wallet func(string) Wallet) []earning {
	if !schemas.MoneyEarnsReputation(e.Amount, e.Currency) {
		return nil
	}
	return bothParties(e.env, wallet(e.PayerWalletID).Owner, e.env.ActorUserID, e.TransactionID)
}

// depositCompleted: wallet-deposit to the depositor.
type depositCompleted struct {
	schemas.DepositCompleted
	deriving
}

func (e *depositCompleted) Lock(b *batch) { b.derive(&e.deriving, e.earn) }

func (e *depositCompleted) earn(func(string) Wallet) []earning {
	if !schemas.MoneyEarnsReputation(e.Amount, e.Currency) {
		return nil
	}
	return daily(e.env, e.env.ActorUserID, schemas.RepKindWalletDeposit, weightWalletDeposit, e.TransactionID)
}

// withdrawalCompleted: wallet-payout to the owner.
type withdrawalCompleted struct {
	schemas.WithdrawalCompleted
	deriving
}

func (e *withdrawalCompleted) Lock(b *batch) { b.derive(&e.deriving, e.earn) }

func (e *withdrawalCompleted) earn(func(string) Wallet) []earning {
	if !schemas.MoneyEarnsReputation(e.Amount, e.Currency) {
		return nil
	}
	return daily(e.env, e.env.ActorUserID, schemas.RepKindWalletPayout, weightWalletPayout, e.TransactionID)
}

// donationReceived: charity-donor to the donor, only from
// DonationReputationMinKzt, and once per donor, campaign and UTC day (the
// source id), so that many small donations, or many accounts, cannot buy
// reputation cheaply. The envelope's actor is the donor, anonymous or not.
//
// Releases before the daily rule (a48d3e3) credited every donation under
// its own id: a donation credited so is not credited again when
// events.charity is read from the start (the earning's before).
type donationReceived struct {
	schemas.DonationReceived
	deriving
}

func (e *donationReceived) Lock(b *batch) { b.derive(&e.deriving, e.earn) }

func (e *donationReceived) earn(func(string) Wallet) []earning {
	if e.AmountKzt < schemas.DonationReputationMinKzt {
		return nil
	}
	return one(e.env.ActorUserID, schemas.RepKindCharityDonor, "charity", weightCharityDonor,
		DonorSource(e.CampaignID, e.CreatedAt), e.DonationID)
}

// DonorSource names the donor's charity-donor event of a campaign and day.
func DonorSource(campaignID string, at time.Time) string {
	return "donation:" + campaignID + ":" + at.UTC().Format(time.DateOnly)
}

// DaySource names a user's money-movement event of one kind and UTC day.
// The day is the event's own time, so a re-read lands on the same source.
func DaySource(at time.Time) string {
	return "day:" + at.UTC().Format(time.DateOnly)
}

// bothParties is wallet-active to the payer and to the payee of a movement,
// once a day each. Before the daily rule each side's source was txID:from
// and txID:to.
func bothParties(env schemas.Envelope, payer, payee, txID string) []earning {
	return append(daily(env, payer, schemas.RepKindWalletActive, weightWalletActive, txID+":from"),
		daily(env, payee, schemas.RepKindWalletActive, weightWalletActive, txID+":to")...)
}

// daily is a money-movement event counted once per user, kind and UTC day;
// before is the source the same credit had under the per-transaction rule.
func daily(env schemas.Envelope, userID, kind string, weight int64, before string) []earning {
	return one(userID, kind, "fiat", weight, DaySource(env.OccurredAt), before)
}

func one(userID, kind, module string, weight int64, sourceID, before string) []earning {
	if userID == "" || sourceID == "" {
		return nil
	}
	return []earning{{ReputationEvent: schemas.ReputationEvent{UserID: userID, Kind: kind, SourceModule: module,
		Weight: weight, SourceID: sourceID}, Before: before}}
}
