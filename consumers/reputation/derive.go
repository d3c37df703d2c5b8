package reputation

import (
	"fmt"
	"sort"
	"time"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
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

// derivation turns one event into the reputation events it earns.
type derivation struct {
	topic string
	// read decodes the event's data, once: the applier needs the wallets
	// before its one query for them, and the rule after it.
	read func(env schemas.Envelope) (reading, error)
}

// reading is one event read: the wallets whose owners or currencies its
// rule needs, and the rule over them.
type reading struct {
	wallets []string
	earn    func(wallet func(walletID string) Wallet) []earning
}

// derive declares the rule of one event type over its typed data.
func derive[T any](topic string, wallets func(T) []string,
	rule func(env schemas.Envelope, data T, wallet func(string) Wallet) []earning) derivation {
	return derivation{
		topic: topic,
		read: func(env schemas.Envelope) (reading, error) {
			d, err := schemas.DataAs[T](env)
			if err != nil {
				return reading{}, fmt.Errorf("read %s: %w", env.Type, err)
			}
			r := reading{earn: func(wallet func(string) Wallet) []earning { return rule(env, d, wallet) }}
			if wallets != nil {
				r.wallets = wallets(d)
			}
			return r, nil
		},
	}
}

// derivations is the table: event type -> the reputation it earns.
//
// Money movements (transfers, paid requests, deposits, payouts) earn only
// from schemas.MoneyEarnsReputation (10 KZT, 1 USD) and at most once per
// user, kind and UTC day of the event: their source id is the day
// (DaySource), so the unique (user, kind, source) that makes a redelivery
// a no-op also makes the second movement of the day one. A transfer and a
// paid request are both wallet-active: together they earn +1 a day a side.
func derivations() map[string]derivation {
	return map[string]derivation{
		schemas.TypeTransferCompleted: derive(topics.EventsFiat,
			func(d schemas.TransferCompleted) []string { return []string{d.ToWallet} },
			func(env schemas.Envelope, d schemas.TransferCompleted, wallet func(string) Wallet) []earning {
				to := wallet(d.ToWallet) // both wallets hold one currency
				if !schemas.MoneyEarnsReputation(d.AmountKzt, to.Currency) {
					return nil
				}
				return bothParties(env, env.ActorUserID, to.Owner, d.TxID)
			}),
		schemas.TypeRequestPaid: derive(topics.EventsFiat,
			func(d schemas.RequestPaid) []string { return []string{d.PayerWalletID} },
			func(env schemas.Envelope, d schemas.RequestPaid, wallet func(string) Wallet) []earning {
				if !schemas.MoneyEarnsReputation(d.Amount, d.Currency) {
					return nil
				}
				return bothParties(env, wallet(d.PayerWalletID).Owner, env.ActorUserID, d.TransactionID)
			}),
		schemas.TypeDepositCompleted: derive(topics.EventsFiat, nil,
			func(env schemas.Envelope, d schemas.DepositCompleted, _ func(string) Wallet) []earning {
				if !schemas.MoneyEarnsReputation(d.Amount, d.Currency) {
					return nil
				}
				return daily(env, env.ActorUserID, schemas.RepKindWalletDeposit, weightWalletDeposit, d.TransactionID)
			}),
		schemas.TypeWithdrawalCompleted: derive(topics.EventsFiat, nil,
			func(env schemas.Envelope, d schemas.WithdrawalCompleted, _ func(string) Wallet) []earning {
				if !schemas.MoneyEarnsReputation(d.Amount, d.Currency) {
					return nil
				}
				return daily(env, env.ActorUserID, schemas.RepKindWalletPayout, weightWalletPayout, d.TransactionID)
			}),
		// Only from DonationReputationMinKzt, and once per donor, campaign
		// and UTC day (the source id), so that many small donations, or many
		// accounts, cannot buy reputation cheaply. The envelope's actor is
		// the donor, anonymous or not.
		//
		// Releases before the daily rule (a48d3e3) credited every donation
		// under its own id: a donation credited so is not credited again
		// when events.charity is read from the start (the earning's before).
		schemas.TypeDonationReceived: derive(topics.EventsCharity, nil,
			func(env schemas.Envelope, d schemas.DonationReceived, _ func(string) Wallet) []earning {
				if d.AmountKzt < schemas.DonationReputationMinKzt {
					return nil
				}
				return one(env.ActorUserID, schemas.RepKindCharityDonor, "charity", weightCharityDonor,
					DonorSource(d.CampaignID, d.CreatedAt), d.DonationID)
			}),
	}
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

// Topics lists what the reputation-applier group reads: its commands and
// the topics of the events it derives reputation from.
func Topics() []string {
	out := []string{topics.ReputationCommands}
	seen := map[string]bool{topics.ReputationCommands: true}
	for _, d := range derivations() {
		if !seen[d.topic] {
			seen[d.topic] = true
			out = append(out, d.topic)
		}
	}
	sort.Strings(out[1:])
	return out
}
