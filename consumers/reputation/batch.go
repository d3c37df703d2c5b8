package reputation

import (
	"context"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/reputation"
)

// batch is the working set of one Apply call, driven by the framework
// (pipeline.ApplyInTx): the records note what they read (Lock), Load reads
// it all at once — the wallets the derived events' rules need, then the
// users, their scores (locked) and the sources applied before — and each
// record is decided in record order.
type batch struct {
	a       *Applier
	users   []string
	keys    []reputation.SourceKey
	wallets []string
	derived []deriver // the event records, whose earnings wait for the wallets

	exists  map[string]bool
	scores  map[string]reputation.Score
	applied map[reputation.SourceKey]reputation.Event
	now     time.Time // the batch's clock (Stamp)
	at      time.Time // the clock of the record decided (At)
	touched map[string]bool
	events  []reputation.Event
}

var _ pipeline.TxBatch = (*batch)(nil)

// deriver is an event record noted by its Lock: earn reads what it earns
// once the batch knows the wallets.
type deriver struct {
	d    *deriving
	earn func(wallet func(walletID string) Wallet) []earning
}

// note asks for the user of ev and its source (and the source the same
// credit had before the daily rule, when any).
func (b *batch) note(ev schemas.ReputationEvent, before string) {
	b.users = append(b.users, ev.UserID)
	if ev.SourceID != "" {
		b.keys = append(b.keys, reputation.SourceKey{UserID: ev.UserID, Kind: ev.Kind, SourceID: ev.SourceID})
	}
	if before != "" {
		b.keys = append(b.keys, reputation.SourceKey{UserID: ev.UserID, Kind: ev.Kind, SourceID: before})
	}
}

// derive notes an event record: the wallets its rule needs and the rule.
func (b *batch) derive(d *deriving, earn func(wallet func(string) Wallet) []earning, wallets ...string) {
	b.wallets = append(b.wallets, wallets...)
	b.derived = append(b.derived, deriver{d: d, earn: earn})
}

// Load resolves the wallets (from the cache or in one query), has every
// event record earn, then reads the users, locks their scores and reads the
// sources applied before: a fixed number of queries, whatever the batch.
func (b *batch) Load(ctx context.Context, tx pgx.Tx) error {
	b.now = b.a.now().UTC().Truncate(time.Microsecond)
	b.touched = map[string]bool{}
	if len(b.derived) > 0 {
		wallet, err := b.a.walletsOf(ctx, tx, b.wallets)
		if err != nil {
			return err
		}
		for _, r := range b.derived {
			r.d.earned = r.earn(wallet)
			for _, e := range r.d.earned {
				b.note(e.ReputationEvent, e.Before)
			}
		}
	}
	if len(b.users) == 0 {
		return nil
	}
	var err error
	if b.exists, err = reputation.ExistingUsers(ctx, tx, b.users); err != nil {
		return err
	}
	known := make([]string, 0, len(b.exists))
	for u := range b.exists {
		known = append(known, u)
	}
	sort.Strings(known)
	if b.scores, err = reputation.LockScores(ctx, tx, known, schemas.RankOf(0), b.now); err != nil {
		return err
	}
	b.applied, err = reputation.BySources(ctx, tx, b.keys)
	return err
}

// Stamp: a record applied for the first time is decided at the batch's clock.
func (b *batch) Stamp(int) time.Time { return b.now }

// At sets the clock of the record decided next.
func (b *batch) At(now time.Time, _ schemas.Envelope) { b.at = now }

// credited is what credit did with one reputation event.
type credited struct {
	noUser bool              // no user with the event's id: nothing
	prev   *reputation.Event // applied before under its source: nothing
	fresh  bool              // applied now: result and emit
	result Result
	emit   []pipeline.Emission
}

// credit applies one reputation event of the record env to its user's
// score, once per (user, kind, sourceId); before, when not empty, is the
// source the same credit had under the per-transaction rule: credited under
// it before an upgrade and read again, the event earned its credit then.
func (b *batch) credit(ev schemas.ReputationEvent, meta []byte, before string, env schemas.Envelope) (credited, error) {
	if !b.exists[ev.UserID] {
		return credited{noUser: true}, nil
	}
	if before != "" {
		if _, ok := b.applied[reputation.SourceKey{UserID: ev.UserID, Kind: ev.Kind, SourceID: before}]; ok {
			return credited{}, nil
		}
	}
	key := reputation.SourceKey{UserID: ev.UserID, Kind: ev.Kind, SourceID: ev.SourceID}
	if ev.SourceID != "" {
		if prev, ok := b.applied[key]; ok {
			return credited{prev: &prev}, nil
		}
	}
	sc, ok := b.scores[ev.UserID]
	if !ok {
		sc = reputation.Score{UserID: ev.UserID, Rank: schemas.RankOf(0)}
	}
	previous, previousRank := sc.Score, sc.Rank
	sc.Score += ev.Weight
	sc.Rank = schemas.RankOf(sc.Score)
	sc.EventCount++
	sc.UpdatedAt = b.at
	b.scores[ev.UserID] = sc
	b.touched[ev.UserID] = true
	// Derived from the record and what it credits: applied again (after a
	// restore, or re-read), the event and its emissions are the same.
	e := reputation.Event{ID: schemas.DerivedID(env.ID, "reputation:"+ev.UserID+":"+ev.Kind+":"+ev.SourceID, env.OccurredAt),
		UserID: ev.UserID, Kind: ev.Kind, SourceModule: ev.SourceModule,
		Weight: ev.Weight, SourceID: ev.SourceID, Meta: meta, ScoreAfter: sc.Score,
		RankBefore: previousRank, RankAfter: sc.Rank, Seq: sc.EventCount, CreatedAt: b.at}
	b.events = append(b.events, e)
	if ev.SourceID != "" {
		if b.applied == nil {
			b.applied = map[reputation.SourceKey]reputation.Event{}
		}
		b.applied[key] = e
	}
	r := resultOf(e)
	r.PreviousScore = previous
	emit, err := emissions(e, previous, r.Promoted, b.at, env.OccurredAt)
	if err != nil {
		return credited{}, err
	}
	return credited{fresh: true, result: r, emit: emit}, nil
}

// Save inserts the batch's events and writes the scores they changed.
func (b *batch) Save(ctx context.Context, tx pgx.Tx) error {
	if len(b.events) == 0 {
		return nil
	}
	if err := reputation.InsertEvents(ctx, tx, b.events); err != nil {
		return err
	}
	upd := make([]reputation.Score, 0, len(b.touched))
	for u := range b.touched {
		upd = append(upd, b.scores[u])
	}
	sort.Slice(upd, func(i, j int) bool { return upd[i].UserID < upd[j].UserID })
	return reputation.UpsertScores(ctx, tx, upd)
}
