// Package reputation applies weighted reputation events to users' scores.
// Its topic is keyed by user id, so one consumer applies every event of a
// user, in order.
package reputation

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/storage/reputation"
	"github.com/fintech/platform/topics"
)

// Result is the answer to an applied event: the contract's type.
type Result = schemas.ReputationEventResult

// Applier is the pipeline.Handler of the reputation-applier group. Its
// record types are declared on a pipeline.Table (declarations): its one
// command, reputation.event (event.go), and the events of other modules it
// derives reputation from (derive.go). A record of reputation.commands that
// cannot be read answers 400 invalid_command, as on every table.
type Applier struct {
	now   func() time.Time
	table *pipeline.Table[*batch]

	mu      sync.Mutex
	wallets map[string]Wallet // a wallet never changes owner or currency
}

var _ pipeline.Handler = (*Applier)(nil)

// maxWallets bounds the wallet cache; it starts over when full.
const maxWallets = 100_000

// declarations lists the command the applier reads on reputation.commands
// and, one line each, the events of other modules that earn reputation
// (their rules: derive.go).
func declarations() []pipeline.Declaration[*batch] {
	return []pipeline.Declaration[*batch]{
		pipeline.Declare[*batch, reputationEvent](schemas.TypeReputationEvent),

		pipeline.DeclareEvent[*batch, transferCompleted](topics.EventsFiat, schemas.TypeTransferCompleted),
		pipeline.DeclareEvent[*batch, requestPaid](topics.EventsFiat, schemas.TypeRequestPaid),
		pipeline.DeclareEvent[*batch, depositCompleted](topics.EventsFiat, schemas.TypeDepositCompleted),
		pipeline.DeclareEvent[*batch, withdrawalCompleted](topics.EventsFiat, schemas.TypeWithdrawalCompleted),
		pipeline.DeclareEvent[*batch, donationReceived](topics.EventsCharity, schemas.TypeDonationReceived),
	}
}

func newTable() *pipeline.Table[*batch] {
	table, err := pipeline.NewTable("reputation", topics.ReputationCommands, nil, declarations()...)
	if err != nil {
		panic(err) // the declarations above are fixed: every test of the applier builds it
	}
	return table
}

// NewApplier builds the applier.
func NewApplier(now func() time.Time) *Applier {
	return &Applier{now: now, table: newTable(), wallets: map[string]Wallet{}}
}

// Topics lists what the reputation-applier group reads: its commands and
// the topics of the events it derives reputation from.
func Topics() []string {
	return append([]string{topics.ReputationCommands}, newTable().EventTopics()...)
}

// Apply applies the batch in record order (pipeline.ApplyInTx): commands
// and events interleave in record order, which is each topic's partition
// order. A command whose (user, kind, sourceId) was applied before, in the
// table or earlier in the batch, is answered 200 with the original result
// and changes nothing; an unknown user is 404 user_not_found. An event
// record of another module is answered 200 with no body: what it earns
// (possibly nothing) is applied with the same once-per-source rule, and its
// score updates are emitted with it.
func (a *Applier) Apply(ctx context.Context, tx pgx.Tx, cmds []pipeline.Command) ([]pipeline.Outcome, error) {
	return pipeline.ApplyInTx(ctx, tx, a.table, &batch{a: a}, cmds)
}

// walletsOf resolves wallets' owners and currencies, from the cache or in
// one query.
func (a *Applier) walletsOf(ctx context.Context, q postgres.Querier, ids []string) (func(string) Wallet, error) {
	found := make(map[string]Wallet, len(ids))
	var unknown []string
	a.mu.Lock()
	for _, w := range ids {
		if v, ok := a.wallets[w]; ok {
			found[w] = v
		} else if w != "" {
			unknown = append(unknown, w)
		}
	}
	a.mu.Unlock()
	if len(unknown) > 0 {
		read, err := reputation.Wallets(ctx, q, unknown)
		if err != nil {
			return nil, err
		}
		a.mu.Lock()
		if len(a.wallets)+len(read) > maxWallets {
			a.wallets = map[string]Wallet{}
		}
		for w, v := range read {
			a.wallets[w] = Wallet{Owner: v.Owner, Currency: v.Currency}
			found[w] = a.wallets[w]
		}
		a.mu.Unlock()
	}
	return func(w string) Wallet { return found[w] }, nil
}

func resultOf(e reputation.Event) Result {
	return Result{EventID: e.ID, UserID: e.UserID, Weight: e.Weight, PreviousScore: e.ScoreAfter - e.Weight,
		NewScore: e.ScoreAfter, PreviousRank: e.RankBefore, NewRank: e.RankAfter,
		Promoted: schemas.RankLevel(e.RankAfter) > schemas.RankLevel(e.RankBefore)}
}

// emissions are the events of e; their ids are derived from e's id and at
// (its command's occurredAt).
func emissions(e reputation.Event, before int64, promoted bool, now, at time.Time) ([]pipeline.Emission, error) {
	upd, err := schemas.New(schemas.TypeScoreUpdated, e.UserID, e.UserID, schemas.ScoreUpdated{
		EventID: e.ID, UserID: e.UserID, Kind: e.Kind, SourceModule: e.SourceModule, Weight: e.Weight,
		PreviousScore: before, NewScore: e.ScoreAfter, PreviousRank: e.RankBefore, NewRank: e.RankAfter,
		Promoted: promoted, Seq: e.Seq, SourceID: e.SourceID}, now)
	if err != nil {
		return nil, err
	}
	upd.ID = schemas.DerivedID(e.ID, "event:"+schemas.TypeScoreUpdated, at)
	out := []pipeline.Emission{{Topic: topics.EventsReputation, Env: upd}}
	if promoted {
		pr, err := schemas.New(schemas.TypeRankPromoted, e.UserID, e.UserID, schemas.RankPromoted{
			UserID: e.UserID, PreviousRank: e.RankBefore, NewRank: e.RankAfter, Score: e.ScoreAfter, EventID: e.ID}, now)
		if err != nil {
			return nil, err
		}
		pr.ID = schemas.DerivedID(e.ID, "event:"+schemas.TypeRankPromoted, at)
		out = append(out, pipeline.Emission{Topic: topics.EventsReputation, Env: pr})
	}
	return out, nil
}
