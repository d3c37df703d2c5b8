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
// path brought it. Modules whose triggers have no event of their own (mask
// risk flags, governance, campaign approval) still send commands.
const (
	weightWalletActive  = 1
	weightWalletDeposit = 2
	weightWalletPayout  = 3
	weightCharityDonor  = 4
)

// derivation turns one event into the reputation events it earns.
type derivation struct {
	topic string
	// wallets names the wallets whose owners derive needs.
	wallets func(env schemas.Envelope) ([]string, error)
	derive  func(env schemas.Envelope, owner func(walletID string) string) ([]schemas.ReputationEvent, error)
	// legacy, when set, names the source id under which an older release
	// credited what the event earns (of the same user and kind): an event
	// read again after an upgrade earns nothing when that one was applied.
	legacy func(env schemas.Envelope) string
}

// withLegacy sets d's legacy source from the event's typed data.
func withLegacy[T any](d derivation, source func(T) string) derivation {
	d.legacy = func(env schemas.Envelope) string {
		v, err := schemas.DataAs[T](env)
		if err != nil {
			return ""
		}
		return source(v)
	}
	return d
}

// derive declares the rule of one event type over its typed data.
func derive[T any](topic string, wallets func(T) []string,
	rule func(env schemas.Envelope, data T, owner func(string) string) []schemas.ReputationEvent) derivation {
	read := func(env schemas.Envelope) (T, error) {
		d, err := schemas.DataAs[T](env)
		if err != nil {
			return d, fmt.Errorf("read %s: %w", env.Type, err)
		}
		return d, nil
	}
	return derivation{
		topic: topic,
		wallets: func(env schemas.Envelope) ([]string, error) {
			if wallets == nil {
				return nil, nil
			}
			d, err := read(env)
			if err != nil {
				return nil, err
			}
			return wallets(d), nil
		},
		derive: func(env schemas.Envelope, owner func(string) string) ([]schemas.ReputationEvent, error) {
			d, err := read(env)
			if err != nil {
				return nil, err
			}
			return rule(env, d, owner), nil
		},
	}
}

// derivations is the table: event type -> the reputation it earns.
func derivations() map[string]derivation {
	return map[string]derivation{
		schemas.TypeTransferCompleted: derive(topics.EventsFiat,
			func(d schemas.TransferCompleted) []string { return []string{d.ToWallet} },
			func(env schemas.Envelope, d schemas.TransferCompleted, owner func(string) string) []schemas.ReputationEvent {
				return bothParties(env.ActorUserID, owner(d.ToWallet), d.TxID)
			}),
		schemas.TypeRequestPaid: derive(topics.EventsFiat,
			func(d schemas.RequestPaid) []string { return []string{d.PayerWalletID} },
			func(env schemas.Envelope, d schemas.RequestPaid, owner func(string) string) []schemas.ReputationEvent {
				return bothParties(owner(d.PayerWalletID), env.ActorUserID, d.TransactionID)
			}),
		schemas.TypeDepositCompleted: derive(topics.EventsFiat, nil,
			func(env schemas.Envelope, d schemas.DepositCompleted, _ func(string) string) []schemas.ReputationEvent {
				return one(env.ActorUserID, schemas.RepKindWalletDeposit, "fiat", weightWalletDeposit, d.TransactionID)
			}),
		schemas.TypeWithdrawalCompleted: derive(topics.EventsFiat, nil,
			func(env schemas.Envelope, d schemas.WithdrawalCompleted, _ func(string) string) []schemas.ReputationEvent {
				return one(env.ActorUserID, schemas.RepKindWalletPayout, "fiat", weightWalletPayout, d.TransactionID)
			}),
		// Only from DonationReputationMinKzt, and once per donor, campaign
		// and UTC day (the source id), so that many small donations, or many
		// accounts, cannot buy reputation cheaply. The envelope's actor is
		// the donor, anonymous or not.
		//
		// Releases before the daily rule (a48d3e3) credited every donation
		// under its own id: a donation credited so is not credited again
		// when events.charity is read from the start.
		schemas.TypeDonationReceived: withLegacy(derive(topics.EventsCharity, nil,
			func(env schemas.Envelope, d schemas.DonationReceived, _ func(string) string) []schemas.ReputationEvent {
				if d.AmountKzt < schemas.DonationReputationMinKzt {
					return nil
				}
				return one(env.ActorUserID, schemas.RepKindCharityDonor, "charity", weightCharityDonor,
					DonorSource(d.CampaignID, d.CreatedAt))
			}), func(d schemas.DonationReceived) string { return d.DonationID }),
	}
}

// DonorSource names the donor's charity-donor event of a campaign and day.
func DonorSource(campaignID string, at time.Time) string {
	return "donation:" + campaignID + ":" + at.UTC().Format(time.DateOnly)
}

// bothParties is wallet-active to the payer and to the payee of a movement.
func bothParties(payer, payee, txID string) []schemas.ReputationEvent {
	return append(one(payer, schemas.RepKindWalletActive, "fiat", weightWalletActive, txID+":from"),
		one(payee, schemas.RepKindWalletActive, "fiat", weightWalletActive, txID+":to")...)
}

func one(userID, kind, module string, weight int64, sourceID string) []schemas.ReputationEvent {
	if userID == "" || sourceID == "" {
		return nil
	}
	return []schemas.ReputationEvent{{UserID: userID, Kind: kind, SourceModule: module, Weight: weight, SourceID: sourceID}}
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
